package runtime_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestComposition crosses every dispatch path (jobopt.Paths) with every
// job option (jobopt.All) and the pairs of options that meet on one job
// (jobopt.Pairs). Each cell dispatches its jobs through its path with
// its options set, runs them on a real worker and looks at what the
// worker got: the envelope as stored under the running job, the JobInfo,
// the handler's context, the failed store. It then holds that to what
// jobopt.ExpectAll says the cell does: the option works, is refused with
// a documented error, is not applied, or cannot be set on the path.
//
// The cells run many at once, each with a queue, a router and workers
// of its own (composition_run_test.go); the paths' drivers are in
// composition_paths_test.go.
func TestComposition(t *testing.T) {
	t.Parallel()
	checkCompositionCovers(t)
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := newCompBackend(t, be)
			cells := b.cells()
			b.runAll(cells)
			for _, c := range cells {
				t.Run(c.path.Name+"/"+c.row.name, func(t *testing.T) {
					<-c.done
					c.check(t)
				})
			}
		})
	}
}

// checkCompositionCovers fails when an option of jobopt's table has no
// aspect here, or a path no driver, or this test knows a path or option
// that the table does not: adding an option or a path adds its row or
// column.
func checkCompositionCovers(t *testing.T) {
	t.Helper()
	var options []string
	for _, o := range jobopt.All {
		options = append(options, o.Name)
	}
	for _, o := range jobopt.Overrides {
		options = append(options, o.Name)
	}
	for _, name := range options {
		assert.Contains(t, compAspects, name, "option %s has no aspect in compAspects: say how the composition test sets it and sees its effect", name)
	}
	for name := range compAspects {
		assert.Contains(t, options, name, "compAspects has %s, which is no option of jobopt.All", name)
	}
	var paths []string
	for _, p := range jobopt.Paths {
		paths = append(paths, p.Name)
		assert.Contains(t, compDrivers, p.Name, "path %s has no driver in compDrivers", p.Name)
	}
	for name := range compDrivers {
		assert.Contains(t, paths, name, "compDrivers has %s, which is no path of jobopt.Paths", name)
	}
	for _, p := range jobopt.Paths {
		for _, name := range options {
			if out := jobopt.Expect(name, p.Name); out.Effect == jobopt.Refused {
				assert.Contains(t, compErrors, out.Err, "%s on %s is refused with %s, which compErrors does not know", name, p.Name, out.Err)
			}
		}
	}
}

// compErrors are the errors a refusal may name (jobopt.Outcome.Err).
var compErrors = map[string]error{"ErrInvalid": runtime.ErrInvalid}

// compRow is a row of the table: one option, or a pair.
type compRow struct {
	name    string
	options []string
}

func (r compRow) has(option string) bool { return slices.Contains(r.options, option) }

// compRows are the options of jobopt.All and jobopt.Overrides, each
// alone, then the pairs.
func compRows() []compRow {
	var rows []compRow
	for _, o := range jobopt.All {
		rows = append(rows, compRow{name: o.Name, options: []string{o.Name}})
	}
	for _, o := range jobopt.Overrides {
		rows = append(rows, compRow{name: o.Name, options: []string{o.Name}})
	}
	for _, p := range jobopt.Pairs {
		rows = append(rows, compRow{name: strings.Join(p, "+"), options: p})
	}
	return rows
}

// The values the cells set and wait for: short, so that the whole table
// runs in seconds.
const (
	compDelay      = 400 * time.Millisecond
	compWindow     = time.Second // a debounce window: the three dispatches of a burst go out within it, even under -race
	compBackoff    = 300 * time.Millisecond
	compRetryUntil = 500 * time.Millisecond
	compTimeout    = 7 * time.Second
	compRunFor     = 150 * time.Millisecond // a grouped job's run, long enough for two to meet
	compSlack      = 30 * time.Millisecond  // for clocks read in different places
)

var compTags = []string{"a", "b"}

// compAspect is how the test sets one option on a cell's jobs, and what
// it expects to see of it.
type compAspect struct {
	// set sets the option on the cell's jobs.
	set func(c *compCell, o *runtime.JobOptions)
	// worker sets what the option needs of the worker to show.
	worker func(w *runtime.WorkerConfig)
	// handle is what the handler does on the attempt, nil to succeed.
	handle func(c *compCell, r *compRun) error
	// fails is the error the jobs end with in the failed store, nil if
	// they succeed.
	fails error
	// check looks for the option's effect in what the cell saw, for
	// effect Works or NotApplied.
	check func(t *testing.T, c *compCell, effect jobopt.Effect)
}

var errCompHandler = errors.New("the handler failed, as the cell asks")

// compAspects has one entry per option of jobopt.All and
// jobopt.Overrides.
var compAspects = map[string]compAspect{
	"Queue": {
		set: func(c *compCell, o *runtime.JobOptions) { o.Queue = c.queue },
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, r := range c.runs() {
				assert.Equal(t, c.queue, r.info.Queue, "JobInfo.Queue of job %d", r.job.N)
			}
		},
	},
	"Connection": {
		set: func(c *compCell, o *runtime.JobOptions) { o.Connection = c.b.connName },
		check: func(t *testing.T, c *compCell, effect jobopt.Effect) {
			want, where := "conn", "the engine of connection "+c.b.connName
			if effect == jobopt.NotApplied {
				want, where = "main", "the engine the path was called on"
			}
			for _, r := range c.runs() {
				assert.Equal(t, want, r.info.Worker, "job %d ran on the worker of %q; want it on %s", r.job.N, r.info.Worker, where)
			}
		},
	},
	"Tries": {
		set:    func(_ *compCell, o *runtime.JobOptions) { o.Tries = 3 },
		handle: failBefore(3),
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, n := range c.expected() {
				assert.Equal(t, []int{1, 2, 3}, c.attempts(n), "attempts of job %d, whose tries=3 let it fail twice (the worker's default is 1)", n)
			}
		},
	},
	"Backoff": {
		set:    func(_ *compCell, o *runtime.JobOptions) { o.Backoff = []time.Duration{compBackoff} },
		worker: func(w *runtime.WorkerConfig) { w.Tries = 2 },
		handle: failBefore(2),
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, n := range c.expected() {
				rs := c.runsOf(n)
				if !assert.Len(t, rs, 2, "attempts of job %d", n) {
					continue
				}
				gap := rs[1].start.Sub(rs[0].end)
				assert.GreaterOrEqual(t, gap, compBackoff-compSlack, "job %d's second attempt came %v after its first; its backoff is %v", n, gap, compBackoff)
			}
		},
	},
	"Timeout": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.Timeout = compTimeout },
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, r := range c.runs() {
				assert.True(t, r.deadline > compTimeout-time.Second && r.deadline <= compTimeout,
					"job %d's context ends %v after its start; its timeout is %v (the worker's 60s)", r.job.N, r.deadline, compTimeout)
			}
		},
	},
	"RetryUntil": {
		set:    func(_ *compCell, o *runtime.JobOptions) { o.RetryUntil = compRetryUntil },
		worker: func(w *runtime.WorkerConfig) { w.Backoff = []time.Duration{100 * time.Millisecond} },
		handle: func(*compCell, *compRun) error { return errCompHandler },
		fails:  runtime.ErrRetryUntil,
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, f := range c.failedEnvs(t) {
				after := time.Duration(f.RetryUntil-f.DispatchedAt) * time.Millisecond
				if c.debounced {
					// The burst's job keeps the ID, and so the dispatch
					// time, of the burst's first dispatch, and the payload,
					// and so the retry-until, of its last.
					assert.True(t, after >= compRetryUntil && after < compRetryUntil+time.Second, "RetryUntil of job %s is %v after its burst's first dispatch; want %v after its last", f.ID, after, compRetryUntil)
					continue
				}
				assert.Equal(t, compRetryUntil, after, "RetryUntil of job %s, after its dispatch", f.ID)
			}
		},
	},
	"MaxExceptions": {
		set:    func(_ *compCell, o *runtime.JobOptions) { o.MaxExceptions = 2 },
		worker: func(w *runtime.WorkerConfig) { w.Tries = 10 },
		handle: func(*compCell, *compRun) error { return errCompHandler },
		fails:  runtime.ErrMaxExceptions,
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, n := range c.expected() {
				assert.Equal(t, []int{1, 2}, c.attempts(n), "attempts of job %d, with 10 tries and max_exceptions=2", n)
			}
		},
	},
	"FailOnTimeout": {
		set:    func(_ *compCell, o *runtime.JobOptions) { o.FailOnTimeout = true },
		worker: func(w *runtime.WorkerConfig) { w.Tries, w.Timeout = 5, 200*time.Millisecond },
		handle: func(_ *compCell, r *compRun) error { <-r.ctx.Done(); return r.ctx.Err() },
		fails:  runtime.ErrTimeout,
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, n := range c.expected() {
				assert.Equal(t, []int{1}, c.attempts(n), "attempts of job %d, with 5 tries and fail_on_timeout", n)
			}
		},
	},
	"Delay": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.Delay = compDelay },
		check: func(t *testing.T, c *compCell, effect jobopt.Effect) {
			if effect == jobopt.NotApplied {
				c.checkRetriedReady(t)
				return
			}
			for _, r := range c.runs() {
				from := c.delayFrom(r.job.N)
				assert.GreaterOrEqual(t, r.start.Sub(from), compDelay-compSlack, "job %d started %v after its dispatch; its delay is %v", r.job.N, r.start.Sub(from), compDelay)
			}
		},
	},
	// At is set by the drivers, to compCell.at: compDelay after the
	// cell's first dispatch.
	"At": {
		check: func(t *testing.T, c *compCell, effect jobopt.Effect) {
			if effect == jobopt.NotApplied {
				c.checkRetriedReady(t)
				return
			}
			for _, r := range c.runs() {
				assert.False(t, r.start.Before(c.at.Add(-compSlack)), "job %d started at %v, before its At(%v)", r.job.N, r.start, c.at)
			}
		},
	},
	"UniqueFor": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.UniqueFor = time.Minute },
		check: func(t *testing.T, c *compCell, effect jobopt.Effect) {
			for _, r := range c.runs() {
				if effect == jobopt.NotApplied {
					assert.NoError(t, r.copyErr, "a copy of job %d, dispatched while it ran, was refused: it holds a unique lock", r.job.N)
					continue
				}
				var dup *runtime.DuplicateError
				if assert.ErrorAs(t, r.copyErr, &dup, "a copy of job %d, dispatched while it ran, was not refused: it holds no unique lock", r.job.N) {
					assert.Equal(t, r.info.ID, dup.HolderID, "the holder of job %d's unique lock", r.job.N)
				}
			}
			if effect == jobopt.NotApplied && c.retry {
				c.checkRetriedReady(t)
			}
		},
	},
	"Debounce": {
		set:   func(c *compCell, o *runtime.JobOptions) { o.Debounce = c.window },
		check: checkDebounce,
	},
	"DebounceMaxWait": {
		set: func(c *compCell, o *runtime.JobOptions) {
			o.Debounce, o.DebounceMaxWait = c.window, c.window
		},
		check: checkDebounce,
	},
	"Needs": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.Needs = []string{"test.Parent"} },
		check: func(t *testing.T, c *compCell, effect jobopt.Effect) {
			t.Errorf("%s: a job that needs results went through (%v); it runs only as a step of a workflow", c.path.Name, effect)
		},
	},
	"Encrypted": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.Encrypted = true },
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, r := range c.runs() {
				assert.Equal(t, compSecret(c, r.job.N), r.job.Secret, "the handler of job %d got its field", r.job.N)
				if r.env != nil {
					assert.True(t, r.env.Encrypted, "job %d is not sealed in Redis", r.job.N)
				}
				assert.NotContains(t, string(r.payload), r.job.Secret, "job %d's field is readable in Redis", r.job.N)
			}
		},
	},
	"Tags": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.Tags = compTags },
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, r := range c.runs() {
				if r.env != nil {
					assert.Subset(t, r.env.Tags, compTags, "the tags of job %d", r.job.N)
				}
			}
		},
	},
	"GroupLimit": {
		set: func(_ *compCell, o *runtime.JobOptions) { o.GroupLimit = 1 },
		handle: func(_ *compCell, r *compRun) error {
			time.Sleep(compRunFor)
			return nil
		},
		check: func(t *testing.T, c *compCell, _ jobopt.Effect) {
			for _, r := range c.runs() {
				assert.Equal(t, c.group, r.info.Headers[runtime.GroupHeader], "the group of job %d", r.job.N)
				assert.Equal(t, "1", r.info.Headers[runtime.GroupLimitHeader], "the group limit of job %d", r.job.N)
				assert.True(t, r.inGroup, "Inspector.Groups did not show group %q running while job %d ran: %+v", c.group, r.job.N, r.groups)
			}
			assert.LessOrEqual(t, c.maxRunning, 1, "the group limit of 1 did not hold: %d jobs of group %q ran at once", c.maxRunning, c.group)
		},
	},
}

// failBefore fails each attempt before the nth.
func failBefore(n int) func(*compCell, *compRun) error {
	return func(_ *compCell, r *compRun) error {
		if r.info.Attempt < n {
			return errCompHandler
		}
		return nil
	}
}

// checkDebounce checks the burst of a debounced cell: on a path that
// debounces, every dispatch of a burst returned the burst's job, the
// second one moved its due time on (or, with a max wait as long as the
// window, did not), and only the last ran; on one that does not, each
// ran.
func checkDebounce(t *testing.T, c *compCell, effect jobopt.Effect) {
	if effect == jobopt.NotApplied {
		if c.retry {
			c.checkRetriedReady(t)
		}
		return // the runs, every dispatch's, are checked against expected()
	}
	if c.returnsIDs() {
		for s := range c.slots {
			var ids []string
			for _, round := range c.obs.rounds {
				ids = append(ids, round[s])
			}
			assert.Len(t, slices.Compact(ids), 1, "the dispatches of a burst return the burst's job: %v", ids)
		}
		if assert.Len(t, c.obs.dues, 2, "due times read after the first two dispatches") {
			if c.row.has("DebounceMaxWait") {
				assert.Equal(t, c.obs.dues[0], c.obs.dues[1], "a max wait as long as the window keeps the burst's job where the first dispatch put it")
			} else {
				assert.True(t, c.obs.dues[1].After(c.obs.dues[0]), "a dispatch of the burst did not move its job's due time on: %v, then %v", c.obs.dues[0], c.obs.dues[1])
			}
		}
	}
}

// check holds what the cell saw to what jobopt says it does.
func (c *compCell) check(t *testing.T) {
	t.Helper()
	if c.path.Name == "DispatchTx" || c.path.Name == "DispatchManyTx" || c.path.Name == "FailedRetrySQL" {
		pgtest.URL(t) // skips without PostgreSQL, fails in CI
	}
	want := c.outcome
	switch want.Effect {
	case jobopt.NoWay:
		t.Logf("%s has no way to set %s: %s", c.path.Name, c.row.name, want.Why)
		return
	case jobopt.Refused:
		require.NoError(t, c.obs.harness)
		require.Error(t, c.obs.sendErr, "%s of %s: want it refused with %s (%s)", c.path.Name, c.row.name, want.Err, want.Why)
		assert.ErrorIs(t, c.obs.sendErr, compErrors[want.Err])
		for _, name := range want.Names {
			assert.Contains(t, strings.ToLower(c.obs.sendErr.Error()), strings.ToLower(name), "the refusal names %q", name)
		}
		assert.Empty(t, c.runs(), "a refused dispatch ran")
		return
	}
	require.NoError(t, c.obs.harness)
	require.NoError(t, c.obs.sendErr, "%s of %s", c.path.Name, c.row.name)
	c.checkEnded(t)
	c.checkWorkflows(t)
	for _, name := range c.row.options {
		effect := jobopt.Expect(name, c.path.Name).Effect
		if effect == jobopt.Works {
			c.checkCarried(t, name)
		}
		compAspects[name].check(t, c, effect)
	}
}

// checkEnded checks that the expected jobs, and only they, ran to their
// end: a success, or the failed store with the error the cell's options
// lead to.
func (c *compCell) checkEnded(t *testing.T) {
	t.Helper()
	want := c.expected()
	require.False(t, c.obs.timedOut, "the cell did not end within %v: jobs %v ran, %d failed", compCellTimeout, c.ns(), len(c.obs.failed))
	if c.fails == nil {
		var failed []string
		for _, f := range c.obs.failed {
			failed = append(failed, f.Error)
		}
		require.Empty(t, failed, "jobs failed")
		var ok []int
		for _, r := range c.runs() {
			if r.err == nil {
				ok = append(ok, r.job.N)
			}
		}
		slices.Sort(ok)
		assert.Equal(t, want, ok, "the jobs that ran and succeeded")
		return
	}
	require.Len(t, c.obs.failed, len(want), "jobs in the failed store")
	for _, f := range c.obs.failed {
		assert.Contains(t, f.Error, c.fails.Error(), "the error job %s failed with", f.ID)
	}
	for _, n := range c.ns() {
		assert.Contains(t, want, n, "job %d ran", n)
	}
}

// checkWorkflows checks that the workflows of a WorkflowStep cell
// ended as their steps did: succeeded, or failed when the jobs fail.
func (c *compCell) checkWorkflows(t *testing.T) {
	t.Helper()
	if c.path.Name != "WorkflowStep" {
		return
	}
	want := runtime.WorkflowSucceeded
	if c.fails != nil {
		want = runtime.WorkflowFailed
	}
	require.NotEmpty(t, c.workflows, "no workflow was dispatched")
	for _, id := range c.workflows {
		info, err := runtime.NewInspector(c.main).Workflow(context.Background(), id)
		if assert.NoError(t, err, "workflow %s", id) {
			assert.Equal(t, want, info.State, "the state of workflow %s: %+v", id, info.Steps)
		}
	}
}

// checkCarried checks that the envelope stored under each running job,
// as the worker reserved it, carries option (if it travels in one).
func (c *compCell) checkCarried(t *testing.T, option string) {
	t.Helper()
	var field string
	for _, o := range jobopt.All {
		if o.Name == option {
			field = o.Envelope
		}
	}
	if field == "" {
		return
	}
	envs := c.failedEnvs(t)
	for _, r := range c.runs() {
		if assert.NoError(t, r.envErr, "the stored envelope of job %d", r.job.N) {
			envs = append(envs, r.env)
		}
	}
	for _, env := range envs {
		assert.False(t, reflect.ValueOf(env).Elem().FieldByName(field).IsZero(), "the envelope of job %s does not carry %s (Envelope.%s)", env.ID, option, field)
	}
}

// checkRetriedReady checks that the jobs a retry from the failed store
// pushed back were ready at once.
func (c *compCell) checkRetriedReady(t *testing.T) {
	t.Helper()
	require.NotEmpty(t, c.obs.retried, "no job was retried")
	for _, s := range c.obs.retried {
		assert.NotEqual(t, runtime.StateDelayed, s, "a retried job was delayed")
	}
}
