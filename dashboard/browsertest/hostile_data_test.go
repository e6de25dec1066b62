package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/manualclock"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// Hostile names: markup, a name of 120 characters, a right-to-left
// override, Arabic and Hebrew, and a name that needs escaping in a path
// and in a query (":", a space, "/", "é").
const (
	escapedQueue = "billing: eu/é x"
	xssQueue     = `<img src=x onerror=alert(1)>`
	rtlQueue     = "invoices\u202Efdp.exe"
	arabicQueue  = "فواتير العملاء"
	hebrewQueue  = "חשבוניות ללקוחות"
	// slowQueue is served by a worker busy with one job for the whole test.
	slowQueue = "إرسال بطيء"
)

// longQueue is 120 characters long.
var longQueue = strings.Repeat("a-very-long-queue-name-", 6)[:120]

// sweepQueues are the queues the hostile data fills.
var sweepQueues = []string{escapedQueue, xssQueue, longQueue, rtlQueue, arabicQueue, hebrewQueue}

// thirtyTags returns five tags of 30 characters each.
func thirtyTags(n int) []string {
	return []string{
		fmt.Sprintf("customer:acme-corporation-%04d", n),
		fmt.Sprintf("region:eu-west-1-zone-b-%06d", n),
		fmt.Sprintf("invoice:INV-2026-11-%010d", n),
		fmt.Sprintf("tenant:globex-international%03d", n),
		fmt.Sprintf("campaign:black-friday-2026-%03d", n),
	}
}

// sweepJob runs on the queue it names: it succeeds, fails with a long
// hostile error, or runs until the test ends.
type sweepJob struct {
	Q     string
	N     int
	Fail  bool
	Slow  bool
	Extra []string // more tags
}

func (sweepJob) JobName() string { return "crm.SyncCustomer" }
func (j sweepJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: j.Q, Tries: 1, Tags: append(thirtyTags(j.N), j.Extra...)}
}
func (j sweepJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// groupedJob waits in its tenant's fair group.
type groupedJob struct {
	Q      string
	Tenant string
}

func (groupedJob) JobName() string { return "crm.TenantImport" }
func (j groupedJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: j.Q, GroupLimit: 1, Tags: []string{"tenant:" + j.Tenant}}
}
func (j groupedJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }
func (j groupedJob) JobGroup() string           { return j.Tenant }

// quoteJob finishes with a result holding markup, an override and a
// long tail.
type quoteJob struct{ Q string }

func (quoteJob) JobName() string { return "crm.Quote" }
func (j quoteJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: j.Q, Tags: thirtyTags(400)}
}
func (j quoteJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// quoteResult is what a quoteJob returns.
var quoteResult = "quote for " + evil + " " + rtlQueue + ": " + strings.Repeat("line item, ", 200)

// hostileError is what a failing sweepJob returns: markup, a right-to-left
// override and a long tail.
func hostileError(j sweepJob) error {
	return fmt.Errorf("charge %d declined by the gateway %s for %s: %s", j.N, evil, rtlQueue,
		strings.Repeat("the card issuer refused the authorisation request ", 6))
}

// hostile is a dashboard over Redis filled with hostile data for every
// page, with the IDs a page needs.
type hostile struct {
	ctx      context.Context // dispatches to engine
	engine   *runtime.Engine
	sched    *schedule.Schedule
	url      string // the dashboard, under /admin/
	srv      *httptest.Server
	ready    map[string][]string // queue -> IDs of jobs left ready
	delayed  map[string]string   // queue -> ID of a delayed job
	failed   map[string]string   // queue -> ID of a failed job
	finished map[string]string   // queue -> ID of a finished job kept
	grouped  []string            // IDs of jobs waiting in groups of escapedQueue
	running  string              // ID of the job the slow worker runs
	batchRun string              // a batch with a failed job, run through
	batchNew string              // a batch whose jobs wait
	task     string              // ID of a retry-all task
	rawName  string              // ID of a job whose name is markup, in xssQueue
	result   string              // ID of a finished job of escapedQueue with a result
	wfRun    string              // a running workflow: two steps released, 21 waiting
	wfDone   string              // a workflow run through: succeeded, failed and dropped steps
}

// wfRunID and wfDoneID are the hostile IDs of the workflows (WithID).
var (
	wfRunID  = "order " + evil + " " + rtlQueue
	wfDoneID = "done " + arabicQueue + " <b>x & y</b>"
)

// evilStep is a step whose job name is markup with an override; it
// waits, and never runs.
type evilStep struct{ Q string }

func (evilStep) JobName() string                  { return "evil." + evil + "\u202Egnp.exe" }
func (j evilStep) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: j.Q} }
func (j evilStep) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }

// sweepRouter registers the sweep's jobs; fails counts the failures.
func sweepRouter() *runtime.Router {
	r := runtime.NewRouter()
	runtime.Register(r, "crm.SyncCustomer", func(ctx context.Context, j sweepJob) error {
		if j.Slow {
			<-ctx.Done()
			return nil
		}
		if j.Fail {
			return hostileError(j)
		}
		return nil
	})
	runtime.RegisterResult(r, "crm.Quote", func(ctx context.Context, j quoteJob) (string, error) { return quoteResult, nil })
	runtime.Register(r, "crm.TenantImport", func(ctx context.Context, j groupedJob) error { return nil })
	return r
}

// fillerQueue is the name of the i-th queue of addFillers: after the
// others by name, with markup and an override.
func fillerQueue(i int) string { return fmt.Sprintf("队列 %02d <b>%s</b> \u202Efdp.exe", i, "&amp;") }

// addFillers adds n queues of one ready job each, after the others by
// name, so that the pages across queues read them in windows.
func (h *hostile) addFillers(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		_, err := runtime.Dispatch(h.ctx, sweepJob{Q: fillerQueue(i), N: 300 + i})
		require.NoError(t, err)
	}
}

// fillHostile fills a Redis of its own prefix with hostile data and
// serves its dashboard. A worker named with a right-to-left override
// runs one slow job until the test ends.
func fillHostile(t *testing.T, opts ...func(*dashboard.Options)) *hostile {
	t.Helper()
	bg := context.Background()
	keep := map[string]runtime.FinishedConfig{}
	for _, q := range sweepQueues {
		keep[q] = runtime.FinishedConfig{MaxJobs: 100}
	}
	e, err := runtime.Open(bg, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t), KeepFinished: keep})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	h := &hostile{ctx: runtime.WithDispatcher(bg, e), engine: e, ready: map[string][]string{}, delayed: map[string]string{},
		failed: map[string]string{}, finished: map[string]string{}}
	for _, tag := range thirtyTags(1) {
		require.Len(t, tag, 30, tag)
	}
	dispatch := func(j runtime.Job) string {
		t.Helper()
		id, err := runtime.Dispatch(h.ctx, j)
		require.NoError(t, err)
		return id
	}

	// Monitored tags, before any job: one with an override, one of
	// markup.
	for _, tag := range []string{"file:" + rtlQueue, "note:" + evil} {
		require.NoError(t, runtime.NewInspector(e).MonitorTag(bg, tag))
	}

	// Run through a worker: two jobs succeed and one fails on each
	// queue, and a batch allowed to fail has one of each.
	n := 0
	for _, q := range sweepQueues {
		n++
		h.finished[q] = dispatch(sweepJob{Q: q, N: n})
		n++
		dispatch(sweepJob{Q: q, N: n, Extra: []string{"file:" + rtlQueue}})
		n++
		h.failed[q] = dispatch(sweepJob{Q: q, N: n, Fail: true, Extra: []string{"note:" + evil}})
	}
	h.result = dispatch(quoteJob{Q: escapedQueue})
	// A workflow run through on escapedQueue: a step succeeds, one fails,
	// and the one after both is dropped.
	ended := runtime.NewWorkflow().WithID(wfDoneID)
	ok := runtime.AddStep(ended, sweepJob{Q: escapedQueue, N: 600})
	bad := runtime.AddStep(ended, sweepJob{Q: escapedQueue, N: 601, Fail: true})
	runtime.AddStep(ended, sweepJob{Q: escapedQueue, N: 602}, runtime.After(ok, bad))
	h.wfDone, err = ended.Dispatch(h.ctx)
	require.NoError(t, err)
	h.batchRun, err = runtime.NewBatch(sweepJob{Q: escapedQueue, N: 90}, sweepJob{Q: escapedQueue, N: 91, Fail: true}).
		Name("customers " + evil + " " + rtlQueue).AllowFailures().Dispatch(h.ctx)
	require.NoError(t, err)
	w, err := runtime.NewWorker(e, sweepRouter(), runtime.WorkerConfig{Queues: sweepQueues, StopWhenEmpty: true, Concurrency: 4, Logger: quiet})
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	require.NoError(t, w.Run(wctx))
	ins := runtime.NewInspector(e)
	for _, q := range sweepQueues {
		s, err := ins.Sizes(bg, q)
		require.NoError(t, err)
		require.NotZero(t, s.Failed, "queue %q has a failed job", q)
	}

	// Left waiting: ready jobs with five tags of 30 characters, a
	// delayed one, jobs in fair groups, a batch, a job named with markup.
	for _, q := range sweepQueues {
		for range 3 {
			n++
			h.ready[q] = append(h.ready[q], dispatch(sweepJob{Q: q, N: n}))
		}
		n++
		h.delayed[q], err = runtime.NewPendingDispatch(sweepJob{Q: q, N: n}).Delay(time.Hour).Dispatch(h.ctx)
		require.NoError(t, err)
	}
	for _, tenant := range []string{"acme " + rtlQueue, "globex", "acme " + rtlQueue} {
		h.grouped = append(h.grouped, dispatch(groupedJob{Q: escapedQueue, Tenant: tenant}))
	}
	h.batchNew, err = runtime.NewBatch(sweepJob{Q: escapedQueue, N: 92}, sweepJob{Q: escapedQueue, N: 93}).
		Name("waiting " + arabicQueue).Dispatch(h.ctx)
	require.NoError(t, err)
	// A running workflow: two steps released to their queues, 20 after
	// them (more than a layer draws), and one named with markup.
	run := runtime.NewWorkflow().WithID(wfRunID)
	a := runtime.AddStep(run, sweepJob{Q: escapedQueue, N: 700})
	b := runtime.AddStep(run, sweepJob{Q: xssQueue, N: 701})
	for i := range 20 {
		runtime.AddStep(run, sweepJob{Q: hebrewQueue, N: 710 + i}, runtime.After(a, b))
	}
	runtime.AddStep(run, evilStep{Q: xssQueue}, runtime.After(b))
	h.wfRun, err = run.Dispatch(h.ctx)
	require.NoError(t, err)
	h.rawName = runtime.NewID()
	require.NoError(t, e.Push(bg, &runtime.Envelope{ID: h.rawName, Name: "evil." + evil + "\u202Egnp.exe", Queue: xssQueue, Body: []byte{0x80}}))

	// Queue states: one paused, one held, one limited.
	require.NoError(t, ins.PauseQueue(bg, arabicQueue))
	_, err = ins.HoldQueue(bg, longQueue, time.Hour)
	require.NoError(t, err)
	require.NoError(t, ins.SetQueueLimit(bg, hebrewQueue, 2))
	require.NoError(t, ins.SetQueueRate(bg, hebrewQueue, 10, time.Minute))

	// The schedule: entries named with markup and an override, one on
	// the escaped queue, after one pass.
	h.sched = schedule.New()
	h.sched.Job(sweepJob{Q: escapedQueue, N: 100}).Hourly().Name("nightly " + evil)
	h.sched.Every(5*time.Minute, sweepJob{Q: rtlQueue, N: 101}).Name("sync " + rtlQueue)
	_, err = h.sched.RunDue(bg, e, schedule.Config{Clock: manualclock.New(time.Now().UTC().Truncate(time.Hour))})
	require.NoError(t, err)

	// A worker named with an override, busy with one job on slowQueue.
	slow, err := runtime.NewWorker(e, sweepRouter(), runtime.WorkerConfig{Name: "web\u202E1-tsoh", Queues: []string{slowQueue},
		Concurrency: 2, Sleep: 50 * time.Millisecond, MonitorEvery: 100 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	sctx, stop := context.WithCancel(bg)
	done := make(chan struct{})
	go func() { defer close(done); _ = slow.Run(sctx) }()
	t.Cleanup(func() { stop(); <-done })
	h.running = dispatch(sweepJob{Q: slowQueue, N: 200, Slow: true})
	require.Eventually(t, func() bool {
		s, err := ins.Sizes(bg, slowQueue)
		return err == nil && s.Reserved == 1
	}, 20*time.Second, 20*time.Millisecond)

	mux := http.NewServeMux()
	o := dashboard.Options{Refresh: 500 * time.Millisecond, PageSize: 20, Title: "demo", Logger: quiet, Router: sweepRouter(), Schedule: h.sched}
	for _, f := range opts {
		f(&o)
	}
	mux.Handle("/admin/", http.StripPrefix("/admin", dashboard.New(e, o)))
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	h.url = h.srv.URL + "/admin/"

	// A retry-all task (of a queue of its own, so the others keep
	// their failed jobs).
	h.task = h.startTask(t, longQueue)
	return h
}

// startTask posts retry-all for queue and returns the task's ID.
func (h *hostile) startTask(t *testing.T, queue string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(h.url+"failed/retry-all", map[string][]string{"queue": {queue}})
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	loc := res.Header.Get("Location")
	_, id, ok := strings.Cut(loc, "tasks/")
	if !ok {
		require.NoError(t, errors.New("retry-all led to "+loc))
	}
	return id
}
