package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// scriptCounter counts the calls of some scripts on the wire.
type scriptCounter struct {
	mu sync.Mutex
	n  map[string]int // script name -> calls
	by map[string]string
}

func countScripts(b wbundle, names ...string) *scriptCounter {
	c := &scriptCounter{n: map[string]int{}, by: map[string]string{}}
	for _, n := range names {
		c.by[runtime.ScriptSHA(n)] = n
	}
	b.rdb.AddHook(beforeCalls(func(cmds ...redis.Cmder) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, cmd := range cmds {
			for sha, name := range c.by {
				if runsScript(cmd, sha) {
					c.n[name]++
				}
			}
		}
	}))
	return c
}

func (c *scriptCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = map[string]int{}
	return out
}

// A workflow whose steps all run on one queue lives in that queue's slot,
// its ID naming it, and each step's success is recorded by the call that
// acks its job (step_ack), with no wf_settle call of its own, and the
// steps it releases pushed in that call; one with an ID of the caller's
// lives in a slot of its own, its steps' ends are wf_settle calls, and
// released steps are pushed by step_push.
func TestWorkflowOnOneQueueRecordsEndsInTheAck(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		calls := countScripts(b, "wf_settle", "step_ack", "step_push")
		dispatch := func(order string, id string) string {
			wf := runtime.NewWorkflow()
			if id != "" {
				wf.WithID(id)
			}
			root := runtime.AddStep(wf, wfStock{Order: order + "-0"})
			for i := range 3 {
				runtime.AddStep(wf, wfStock{Order: order + "-" + string(rune('1'+i))}, runtime.After(root))
			}
			got, err := wf.Dispatch(b.ctx)
			require.NoError(t, err)
			calls.take() // the dispatch pushed the root
			return got
		}

		home := dispatch("h", "")
		require.True(t, strings.HasPrefix(home, "{stock}"), home)
		var names []string
		for _, k := range keysMatching(t, b.bundle, b.prefix+":"+home+":*") {
			names = append(names, strings.TrimPrefix(k, b.prefix+":"+home+":"))
		}
		require.ElementsMatch(t, []string{"meta", "state", "left", "kids", "parents", "jobs"}, names,
			"its keys, in the queue's slot (no results, may-fail or spawned steps yet)")
		require.Empty(t, keysMatching(t, b.bundle, b.prefix+":{wf:"+home+"}:*"))
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"stock"}, StopWhenEmpty: true})
		n := calls.take()
		require.Zero(t, n["wf_settle"], "no step's end is a call of its own")
		require.Zero(t, n["step_push"], "the root's ack pushed its children")
		queued := map[string]bool{}
		for _, ev := range b.log.of(runtime.JobQueued) {
			if ev.Name == "wf.Stock" {
				queued[ev.ID] = true
			}
		}
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, home)
		require.NoError(t, err)
		for _, st := range info.Steps {
			require.True(t, queued[st.JobID], "JobQueued for step %s, pushed by its parent's ack", st.ID)
		}
		require.GreaterOrEqual(t, n["step_ack"], 2, "the root's call, then the children's (acked together when they end together)")
		require.LessOrEqual(t, n["step_ack"], 4)

		own := dispatch("o", "mine-"+b.prefix)
		require.Equal(t, "mine-"+b.prefix, own)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"stock"}, StopWhenEmpty: true})
		n = calls.take()
		require.Zero(t, n["step_ack"])
		require.GreaterOrEqual(t, n["wf_settle"], 2)
		require.Equal(t, 1, n["step_push"], "the root's worker pushed its children")

		for _, id := range []string{home, own} {
			info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
			require.NoError(t, err)
			require.Equal(t, runtime.WorkflowSucceeded, info.State, id)
			for _, s := range info.Steps {
				require.Equal(t, runtime.StepSucceeded, s.State, "%s step %s", id, s.ID)
			}
		}
		for _, o := range []string{"h", "o"} {
			for i := range 4 {
				require.Equal(t, 1, rec.runs("stock:"+o+"-"+string(rune('0'+i))), "%s-%d", o, i)
			}
		}
	})
}

// A step_ack whose reply is lost is sent again by the Redis client: a
// step it acked counts as acked, and one it left for the worker (it
// released steps) hands back the same steps, which are pushed once. Every
// step runs once, and the workflow succeeds.
func TestRetriedStepAck(t *testing.T) {
	for _, first := range []string{"releasing", "acked"} {
		t.Run(first, func(t *testing.T) {
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				var rec wfRec
				rec.register(b.router)
				wf := runtime.NewWorkflow()
				var opts []runtime.StepOption
				if first == "releasing" {
					opts = append(opts, runtime.After(runtime.AddStep(wf, wfStock{Order: "r-0"})))
				}
				runtime.AddStep(wf, wfStock{Order: "r-1"}, opts...)
				id, err := wf.Dispatch(b.ctx)
				require.NoError(t, err)
				hook := &replayScripts{sha: runtime.ScriptSHA("step_ack")}
				b.rdb.AddHook(hook)
				b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"stock"}, StopWhenEmpty: true})
				require.Equal(t, 1, hook.replays())
				info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
				require.NoError(t, err)
				require.Equal(t, runtime.WorkflowSucceeded, info.State)
				if first == "releasing" {
					require.Equal(t, 1, rec.runs("stock:r-0"))
				}
				require.Equal(t, 1, rec.runs("stock:r-1"))
				require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "stock"))
			})
		})
	}
}

// A worker with StopWhenEmpty runs every step of a workflow on one
// queue before it stops: a step's dependents are pushed after its job
// finished, once its ack recorded its end, and the worker waits for that
// as it waits for a chain's next link.
func TestStopWhenEmptyRunsTheStepsAnAckReleases(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		const n = 30
		wf := runtime.NewWorkflow()
		var opts []runtime.StepOption
		for i := range n {
			s := runtime.AddStep(wf, wfStock{Order: "w-" + strconv.Itoa(i)}, opts...)
			opts = []runtime.StepOption{runtime.After(s)}
		}
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(id, "{stock}"), id)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"stock"}, StopWhenEmpty: true})
		for i := range n {
			require.Equal(t, 1, rec.runs("stock:w-"+strconv.Itoa(i)), "step %d ran before the worker stopped", i)
		}
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
	})
}

type wfNap struct{ Millis int }

func (wfNap) JobName() string                { return "wf.Nap" }
func (wfNap) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "stock"} }
func (j wfNap) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// A step of a workflow on one queue that succeeds past its workflow's
// deadline, with the deadline's own job not run, fails the workflow in
// the call that records its end: the call leaves the job unacked, its
// worker runs the catch, then acks it. The step after it never runs.
func TestStepAckPastTheDeadlineFailsTheWorkflow(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		runtime.Register(b.router, "wf.Nap", func(ctx context.Context, j wfNap) error {
			time.Sleep(time.Duration(j.Millis) * time.Millisecond)
			return nil
		})
		var c caught
		cb := c.callback("wf-nap-late")
		runtime.RegisterCallback(b.router, cb)
		calls := countScripts(b, "wf_settle", "step_ack")
		wf := runtime.NewWorkflow().Catch(cb.With("nap")).Deadline(150 * time.Millisecond)
		nap := runtime.AddStep(wf, wfNap{Millis: 400})
		runtime.AddStep(wf, wfStock{Order: "late"}, runtime.After(nap))
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(id, "{stock}"), id)
		// The deadline's own job, delayed, is taken out: what ends the
		// workflow is the nap's end, recorded past the deadline.
		in := runtime.NewInspector(b.engine)
		delayed, _, err := in.ListJobs(b.ctx, "stock", runtime.StateDelayed, 0, 10)
		require.NoError(t, err)
		require.Len(t, delayed, 1)
		_, err = in.Cancel(b.ctx, "stock", delayed[0].ID, 0)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"stock"}, StopWhenEmpty: true})
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowFailed, info.State)
		require.Equal(t, "deadline", info.Why)
		require.Equal(t, runtime.StepSucceeded, info.Steps[0].State)
		require.Equal(t, runtime.StepDropped, info.Steps[1].State)
		require.Zero(t, rec.runs("stock:late"))
		require.Len(t, c.list(), 1, "the catch ran once")
		n := calls.take()
		require.Zero(t, n["wf_settle"])
		require.GreaterOrEqual(t, n["step_ack"], 1)
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "stock"), "the nap's job was acked (the failed one is the deadline's, cancelled)")
	})
}

// A workflow whose ID names a partitioned queue as its home keeps its
// steps on the partitions their IDs choose: its steps' acks push none of
// them (they would all land on the partition the parent ran on).
func TestWorkflowHomeOnAPartitionedQueue(t *testing.T) {
	forEachBusBackend(t, runtime.EngineConfig{Partitions: map[string]int{"parts": 4}}, func(t *testing.T, b wbundle, _ redistest.Backend) {
		var s steps
		s.register(b.router)
		const wfs, kids = 16, 12
		for w := range wfs {
			wf := runtime.NewWorkflow().WithID(fmt.Sprintf("{parts}w%d-%s", w, b.prefix))
			root := runtime.AddStep(wf, stepJob{Step: fmt.Sprintf("r%d", w), Q: "parts"})
			for k := range kids {
				runtime.AddStep(wf, stepJob{Step: fmt.Sprintf("k%d-%d", w, k), Q: "parts"}, runtime.After(root))
			}
			_, err := wf.Dispatch(b.ctx)
			require.NoError(t, err)
		}
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"parts"}, StopWhenEmpty: true})
		ran := s.list()
		require.Len(t, ran, wfs*(kids+1))
		for w := range wfs {
			partitions := map[string]bool{}
			for _, r := range ran {
				step, rest, _ := strings.Cut(r, "@")
				if strings.HasPrefix(step, fmt.Sprintf("k%d-", w)) {
					partitions[rest[:strings.LastIndexByte(rest, '#')]] = true // the attempt follows the last #
				}
			}
			require.Greater(t, len(partitions), 1, "workflow %d's steps spread over the partitions: %v", w, partitions)
		}
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "parts"))
	})
}

// wfWide is a workflow of a root and kids dependents after it, wf.Stock
// jobs of the orders "<prefix>-root" and "<prefix>-<i>".
func wfWide(prefix string, kids int) *runtime.Workflow {
	wf := runtime.NewWorkflow()
	all := make([]wfStock, kids)
	for i := range all {
		all[i] = wfStock{Order: prefix + "-" + strconv.Itoa(i)}
	}
	runtime.AddSteps(wf, all, runtime.After(runtime.AddStep(wf, wfStock{Order: prefix + "-root"})))
	return wf
}

// A step with more than 1,000 dependents releases them in parts: its
// ack releases and pushes the first 1,000, and its worker the rest, a
// part a call (step_release), before it acks the step's job. Every
// dependent runs once; with dispatch middleware, the parts are pushed
// through it; and a worker that dies between two parts leaves the step's
// job to run again, which releases the rest and pushes none twice. A
// workflow in a slot of its own (an ID of the caller's) does the same,
// but that wf_settle records the root's success and releases the first
// 1,000, and the worker pushes each part itself.
func TestWorkflowWideReleaseInParts(t *testing.T) {
	const kids = 2500
	for _, mode := range []string{"pushed by the calls", "through middleware", "worker dies between parts",
		"own slot", "own slot, worker dies between parts"} {
		t.Run(mode, func(t *testing.T) {
			ownSlot := strings.HasPrefix(mode, "own slot")
			dies := strings.HasSuffix(mode, "worker dies between parts")
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				var rec wfRec
				rec.register(b.router)
				var seen sync.Map // job ID -> pushes through the middleware
				if mode == "through middleware" {
					b.engine.UseDispatch(func(ctx context.Context, out *runtime.DispatchCall, next func(context.Context) error) error {
						for _, j := range out.Jobs {
							n, _ := seen.LoadOrStore(j.Envelope.ID, new(int))
							*n.(*int)++
						}
						return next(ctx)
					})
				}
				drop := &dropScripts{shas: map[string]bool{runtime.ScriptSHA("step_release"): true}}
				if dies {
					drop.most = 1 // the first part's call, as if its worker died before it was sent
					b.rdb.AddHook(drop)
				}
				calls := countScripts(b, "step_ack", "wf_settle", "step_release", "step_push")
				wf := wfWide("p", kids)
				if ownSlot {
					wf.WithID("wide-" + runtime.NewID())
				}
				id, err := wf.Dispatch(b.ctx)
				require.NoError(t, err)
				require.Equal(t, !ownSlot, strings.HasPrefix(id, "{stock}"), id)
				calls.take()

				in := runtime.NewInspector(b.engine)
				// (a lease long enough that the root's does not run out
				// while embedded, under -race, runs its parts' scripts: at
				// two seconds it did, and the root's job ran again, which
				// the counts below do not expect; the test after this one
				// runs it again on purpose)
				_, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"stock"}, Concurrency: 20,
					RetryAfter: 6 * time.Second, Timeout: 5 * time.Second})
				require.Eventually(t, func() bool {
					info, err := in.Workflow(b.ctx, id)
					return err == nil && info.State == runtime.WorkflowSucceeded
				}, 90*time.Second, 20*time.Millisecond)
				require.Eventually(t, func() bool { return sizes(t, b.bundle, "stock") == runtime.Sizes{} }, 10*time.Second, 20*time.Millisecond,
					"the root's job is acked once the last part is released")
				stop()

				require.Equal(t, 1, rec.runs("stock:p-root"), "the root ran once: run again, it is acked without running")
				for i := range kids {
					require.Equal(t, 1, rec.runs("stock:p-"+strconv.Itoa(i)), "dependent %d", i)
				}
				n := calls.take()
				if dies {
					require.Equal(t, 1, drop.dropped(), "a part's call was lost")
				}
				switch mode {
				case "pushed by the calls":
					require.Equal(t, 2, n["step_release"], "the ack released 1,000, then two parts: 1,000 and 500")
					require.Zero(t, n["step_push"])
					queued := map[string]int{}
					for _, ev := range b.log.of(runtime.JobQueued) {
						queued[ev.ID]++
					}
					info, err := in.Workflow(b.ctx, id)
					require.NoError(t, err)
					require.Len(t, info.Steps, kids+1)
					for _, st := range info.Steps {
						require.Equal(t, 1, queued[st.JobID], "JobQueued for step %s, once", st.ID)
					}
				case "through middleware":
					require.Equal(t, 2, n["step_release"])
					require.GreaterOrEqual(t, n["step_push"], 3, "each part pushed by the worker, through the middleware")
					info, err := in.Workflow(b.ctx, id)
					require.NoError(t, err)
					require.Len(t, info.Steps, kids+1)
					for _, st := range info.Steps[1:] {
						v, ok := seen.Load(st.JobID)
						require.True(t, ok, "step %s was pushed through the middleware", st.ID)
						require.Equal(t, 1, *v.(*int), "step %s", st.ID)
					}
				case "own slot":
					require.Equal(t, 2, n["step_release"], "the root's settle released 1,000, then two parts: 1,000 and 500")
					require.Zero(t, n["step_ack"], "a workflow in a slot of its own records each end with wf_settle")
					require.GreaterOrEqual(t, n["step_push"], 3, "each part pushed by the worker")
				case "own slot, worker dies between parts":
					require.GreaterOrEqual(t, n["step_release"], 2)
					require.GreaterOrEqual(t, n["step_push"], 3, "each part pushed by the worker")
				}
			})
		})
	}
}

// pushHold is a go-redis hook that holds each step_push call until hold
// returns, then records its reply: the number of steps it pushed.
type pushHold struct {
	hold   func(cmd redis.Cmder)
	mu     sync.Mutex
	pushed []int64
}

func (h *pushHold) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pushHold) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !runsScript(cmd, runtime.ScriptSHA("step_push")) {
			return next(ctx, cmd)
		}
		h.hold(cmd)
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.Cmd); ok && err == nil {
			n, _ := c.Int64()
			h.mu.Lock()
			h.pushed = append(h.pushed, n)
			h.mu.Unlock()
		}
		return err
	}
}

func (h *pushHold) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A step whose job runs again after its end was recorded (its worker died
// between two parts of a wide release, and its lease ran out) lists its
// released dependents again, for the push its first run may not have
// made. Each was pushed already, by the call that released it, which
// sets no marker; one may run and end between that list and its push.
// The push reads the workflow's states, and pushes no step that has
// ended: none runs twice. The hook holds each such push until one of the
// dependents it lists has ended. The last dependent of the first part
// waits for that push to be held, so it is one of them: the root's job,
// whose lease ran out while the others ran, is put back behind them.
func TestWorkflowReleaseListedAgainPushesNoEndedStep(t *testing.T) {
	const kids = 1001 // a release in two parts: 1,000 in the ack, then 1
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		ran := map[string]int{}
		gate := make(chan struct{})
		opened := sync.OnceFunc(func() { close(gate) })
		runtime.Register(b.router, "wf.Stock", func(ctx context.Context, j wfStock) error {
			mu.Lock()
			ran[j.Order]++
			mu.Unlock()
			if j.Order == "a-999" {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			time.Sleep(5 * time.Millisecond) // together, the dependents run for longer than the root's lease
			return nil
		})
		drop := &dropScripts{shas: map[string]bool{runtime.ScriptSHA("step_release"): true}, most: 1}
		b.rdb.AddHook(drop)
		id, err := wfWide("a", kids).Dispatch(b.ctx)
		require.NoError(t, err)
		in := runtime.NewInspector(b.engine)
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		jobs := map[string]bool{}
		for _, st := range info.Steps {
			jobs[st.JobID] = true
		}

		payloads := keyspace.New(b.prefix).Queue("stock").Payloads
		hold := &pushHold{hold: func(cmd redis.Cmder) {
			opened()
			var listed []string
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && jobs[s] {
					listed = append(listed, s)
				}
			}
			assert.Eventually(t, func() bool {
				for _, job := range listed {
					if !b.rdb.HExists(context.Background(), payloads, job).Val() {
						return true
					}
				}
				return false
			}, time.Minute, 5*time.Millisecond, "one of the %d steps the push lists ends while it is held", len(listed))
		}}
		b.rdb.AddHook(hold)

		_, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"stock"}, Concurrency: 2,
			RetryAfter: 2 * time.Second, Timeout: 1500 * time.Millisecond})
		require.Eventually(t, func() bool {
			info, err := in.Workflow(b.ctx, id)
			return err == nil && info.State == runtime.WorkflowSucceeded
		}, 2*time.Minute, 20*time.Millisecond)
		stop()

		require.Equal(t, 1, drop.dropped(), "the first part's call was lost")
		hold.mu.Lock()
		defer hold.mu.Unlock()
		require.NotEmpty(t, hold.pushed, "the root's job ran again, and its dependents were listed again to push")
		for _, n := range hold.pushed {
			require.Zero(t, n, "every step listed again was pushed already: queued, or ended")
		}
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 1, ran["a-root"], "the root ran once: run again, it is acked without running")
		for i := range kids {
			require.Equal(t, 1, ran["a-"+strconv.Itoa(i)], "dependent %d", i)
		}
	})
}
