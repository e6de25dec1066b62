package runtime_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/manualclock"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/runtime/lua"
	"github.com/jobgen/jobgen/schedule"
)

// TestScriptKeyAudit runs every Lua script of runtime/lua on the cluster
// under MONITOR and checks, from the commands each script ran, that every
// key it touched was passed in its KEYS and that all of them share one
// slot. An undeclared key in the same slot works silently on a single
// node or even a cluster, so the keys themselves are checked rather than
// waiting for an error. A script the workload does not run fails the
// test, so a new script must get a step here.
func TestScriptKeyAudit(t *testing.T) {
	if len(redistest.ClusterAddrs()) == 0 {
		t.Skipf("no cluster: set %s (scripts/test does)", redistest.ClusterEnv)
	}
	b := setup(t, redistest.Backend{Name: "cluster", URL: "redis+cluster://" + strings.Join(redistest.ClusterAddrs(), ",")}, runtime.EngineConfig{})
	cc := b.rdb.(*redis.ClusterClient)
	scripts := luaScripts(t)

	mons := startMonitors(t, b.ctx, cc)
	luaFirst := mons.calibrate(t, b.ctx, cc, b.prefix)

	// A script that touches a key it was not given, in the same slot: the
	// audit must catch it although Redis runs it without complaint.
	const bad = "redis.call('SET', KEYS[1], '1'); redis.call('SET', KEYS[1] .. ':undeclared', '1'); return 1"
	require.NoError(t, cc.Eval(b.ctx, bad, []string{b.prefix + ":{audit}:declared"}).Err())
	badSHA := sha1Hex(bad)

	exerciseScripts(t, b)

	calls := mons.stop(t, b.ctx, cc, luaFirst)
	auditor := &keyAuditor{node: masterClient(t, b.ctx, cc), slots: map[string]int64{}}
	ran := map[string]int{}
	var sawBad bool
	for _, c := range calls {
		if !c.mentions(b.prefix) || c.sha == sha1Hex(probeScript) {
			continue // another test's call, or the calibration's
		}
		name, ok := scripts[c.sha]
		if c.sha == badSHA {
			problems := auditor.check(t, b.ctx, c)
			require.NotEmpty(t, problems, "the audit missed a script touching an undeclared key")
			require.Contains(t, strings.Join(problems, "\n"), ":{audit}:declared:undeclared")
			sawBad = true
			continue
		}
		require.True(t, ok, "a call with this test's keys ran a script that is not in runtime/lua: %s", c)
		if len(c.inner) == 0 {
			// An EVALSHA refused with NOSCRIPT, after another test's
			// SCRIPT FLUSH, ran nothing; its retry as EVAL is audited. A
			// script whose calls all show nothing is caught below as not run.
			continue
		}
		ran[name]++
		for _, p := range auditor.check(t, b.ctx, c) {
			t.Errorf("KEY AUDIT: script %s: %s\n  call: %s", name, p, c)
		}
	}
	require.True(t, sawBad, "the audit's own check did not run")
	for _, name := range scripts {
		if ran[name] == 0 {
			t.Errorf("KEY AUDIT: script %s.lua was never run by the audit's workload: add a step to exerciseScripts that runs it", name)
		}
	}
	t.Logf("audited script calls: %v", ran)
}

// exerciseScripts drives the engine and a worker so that every script runs
// at least once on the cluster.
func exerciseScripts(t *testing.T, b bundle) {
	ctx, e := b.ctx, b.engine
	// push (ready and delayed), migrate, reserve; the first push of each
	// runs twice,
	// as when the Redis client retries them, and the second run finds the
	// record of the first.
	twice := []*replayScripts{{sha: runtime.ScriptSHA("push")}, {sha: runtime.ScriptSHA("push")}}
	b.rdb.AddHook(twice[0])
	require.NoError(t, e.Push(ctx, env("audit", "app.Job", "1")))
	b.rdb.AddHook(twice[1])
	require.NoError(t, e.Later(ctx, env("audit", "app.Job", "2"), time.Millisecond))
	for _, h := range twice {
		require.Equal(t, 1, h.replays())
	}
	require.NoError(t, e.PushMany(ctx, []runtime.Outgoing{
		{Envelope: env("audit", "app.Job", "3")}, {Envelope: env("audit-b", "app.Job", "4")},
	}))
	// outbox_push and outbox_release, as a relay runs them.
	far := time.Now().Add(time.Hour).UnixMilli()
	require.NoError(t, e.OutboxPush(ctx, "audit-b", far, "row1", "row1", 0, []byte("5")))
	require.NoError(t, e.OutboxPush(ctx, "audit-b", far, "row2", "row2", 1, []byte("6")))
	n, err := e.OutboxRelease(ctx, "audit-b", time.Minute, "row1", "row2")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	time.Sleep(5 * time.Millisecond)
	_, err = runtime.NewBroker(e).Migrate(ctx, "audit")
	require.NoError(t, err)
	_, err = runtime.NewInspector(e).Sizes(ctx, "audit")
	require.NoError(t, err)
	// The reserve runs twice, as when the Redis client retries it: the
	// second run hands back what the first took.
	reserveTwice := &replayScripts{sha: runtime.ScriptSHA("reserve")}
	b.rdb.AddHook(reserveTwice)
	jobs := mustReserve(t, b, "audit", 10).Jobs
	require.Len(t, jobs, 3)
	require.Equal(t, 1, reserveTwice.replays())
	// unreserve, and the reserve pipelined behind a doorbell's BLPOP
	require.NoError(t, e.Unreserve(ctx, jobs[0].Ref, jobs[1].Ref, jobs[2].Ref))
	// with flow limits (flow_limit.go), which the reserve reads from the
	// queue's settings, and the settles ring the doorbell for
	require.NoError(t, runtime.NewInspector(e).SetQueueLimit(ctx, "audit", 10))
	require.NoError(t, runtime.NewInspector(e).SetQueueRate(ctx, "audit", 100, time.Minute))
	// a hold (queue_hold.lua), in the same settings, ended at once
	_, err = runtime.NewInspector(e).HoldQueue(ctx, "audit", time.Hour)
	require.NoError(t, err)
	_, err = runtime.NewInspector(e).HoldQueue(ctx, "audit", 0)
	require.NoError(t, err)
	_, batch, ok, err := e.WaitReserve(ctx, []string{"audit"}, 100*time.Millisecond, 10, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	jobs = batch.Jobs
	require.Len(t, jobs, 3)
	// extend, ack, release, fail
	lost, err := runtime.NewBroker(e).Extend(ctx, time.Minute, jobs[0].Ref, jobs[1].Ref)
	require.NoError(t, err)
	require.Empty(t, lost)
	require.NoError(t, runtime.NewBroker(e).Ack(ctx, jobs[0].Ref))
	require.NoError(t, runtime.NewBroker(e).Release(ctx, runtime.ReleaseOpts{Delay: time.Hour, Exception: true}, jobs[1].Ref))
	require.NoError(t, runtime.NewBroker(e).Fail(ctx, runtime.Failure{Ref: jobs[2].Ref, Err: errors.New("audit")}))
	// retry, forget, prune
	fs := runtime.NewInspector(b.engine).Failed()
	retried, err := fs.Retry(ctx, "audit", jobs[2].ID)
	require.NoError(t, err)
	require.Equal(t, []string{jobs[2].ID}, retried)
	again := mustReserve(t, b, "audit", 1).Jobs
	require.Len(t, again, 1)
	require.NoError(t, runtime.NewBroker(e).Fail(ctx, runtime.Failure{Ref: again[0].Ref, Err: errors.New("audit")}))
	_, err = fs.Forget(ctx, "audit", again[0].ID)
	require.NoError(t, err)
	_, err = fs.Prune(ctx, "audit", time.Hour)
	require.NoError(t, err)
	// clear
	_, err = runtime.NewInspector(e).ClearQueue(ctx, "audit-b")
	require.NoError(t, err)
	// push_group, now and delayed; reserve, unreserve, ack, release
	// and fail of grouped jobs, which pass the group keys.
	pushAll(t, b, grouped("audit-g", "A", 1, "g1"), grouped("audit-g", "A", 1, "g2"), grouped("audit-g", "B", 0, "g3"))
	require.NoError(t, e.Later(ctx, grouped("audit-g", "A", 1, "g4"), time.Hour))
	gj := mustReserve(t, b, "audit-g", 10).Jobs
	require.Len(t, gj, 2, "one of A, at its limit, and one of B")
	require.NoError(t, e.Unreserve(ctx, gj[1].Ref))
	require.NoError(t, runtime.NewBroker(e).Ack(ctx, gj[0].Ref))
	gj = mustReserve(t, b, "audit-g", 10).Jobs
	require.Len(t, gj, 2)
	require.NoError(t, runtime.NewBroker(e).Release(ctx, runtime.ReleaseOpts{}, gj[0].Ref))
	require.NoError(t, runtime.NewBroker(e).Fail(ctx, runtime.Failure{Ref: gj[1].Ref, Err: errors.New("audit")}))
	// failed_moved: with a failed store outside Redis, a failed job
	// moves there, and the move deletes its entry in Redis.
	moving, err := runtime.NewEngine(ctx, b.rdb, runtime.EngineConfig{Prefix: b.prefix, FailedStore: &memFailed{}})
	require.NoError(t, err)
	require.NoError(t, moving.Push(ctx, env("audit-m", "app.Job", "moved")))
	mj, err := runtime.NewBroker(moving).Reserve(ctx, "audit-m", 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, mj.Jobs, 1)
	require.NoError(t, runtime.NewBroker(moving).Fail(ctx, runtime.Failure{Ref: mj.Jobs[0].Ref, Err: errors.New("audit")}))
	nm, err := runtime.NewInspector(moving).Failed().Count(ctx, "audit-m")
	require.NoError(t, err)
	require.Equal(t, int64(1), nm)
	// failed_record: a job that failed outside the engine's queues.
	rec := env("audit", "app.Job", "recorded")
	rec.ID = runtime.NewID()
	recorded, err := fs.Record(ctx, rec, errors.New("audit"), 1)
	require.NoError(t, err)
	require.True(t, recorded)
	// hooks_due and hooks_claim: a failing job's hooks recorded as due,
	// then claimed by a sweep.
	require.NoError(t, e.HooksDue(ctx, runtime.Ref{Queue: "audit", ID: "hooked", Token: "tok"}))
	claimed, err := e.ClaimHooks(ctx, "audit", 0)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	// cancel: a waiting job, then a running one, whose worker's extend
	// finds it cancelled.
	require.NoError(t, e.Push(ctx, env("audit", "app.Job", "cancel-ready")))
	require.NoError(t, e.Push(ctx, env("audit", "app.Job", "cancel-running")))
	for _, id := range []string{"", "running"} {
		var ref runtime.Ref
		var seen int
		if id == "running" {
			r := mustReserve(t, b, "audit", 1).Jobs[0]
			ref, seen = r.Ref, r.Attempts
		} else {
			ready, _, err := runtime.NewInspector(e).ListJobs(ctx, "audit", runtime.StateReady, 0, 1)
			require.NoError(t, err)
			ref = runtime.Ref{Queue: "audit", ID: ready[0].ID}
		}
		_, err := runtime.NewInspector(e).Cancel(ctx, "audit", ref.ID, seen)
		require.NoError(t, err)
		if id == "running" {
			lost, err := runtime.NewBroker(e).Extend(ctx, time.Minute, ref)
			require.NoError(t, err)
			require.Equal(t, []runtime.Ref{ref}, lost)
		}
	}
	// finish: a job acked with its result and its record.
	require.NoError(t, e.Push(ctx, env("audit", "app.Job", "finished")))
	fin := mustReserve(t, b, "audit", 1).Jobs
	require.Len(t, fin, 1)
	require.NoError(t, runtime.NewBroker(e).Finish(ctx, runtime.Finish{Ref: fin[0].Ref, Result: []byte("result"),
		Record: &runtime.FinishedJob{Name: "app.Job", Attempts: 1, Runtime: time.Millisecond}}))
	// schedule_tick: a tick pushed with an entry's lock, one delayed, and
	// a tick skipped as the lock is still held.
	sched := schedule.New()
	sched.Job(onQueue(1, "audit-sched")).Name("audit-lock").WithoutOverlapping()
	sched.Job(onQueue(2, "audit-sched")).Name("audit-delay").Delay(time.Minute)
	clock := manualclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, want := range []schedule.TickOutcome{schedule.TickDispatched, schedule.TickOverlapping} {
		reports, err := sched.RunDue(ctx, e, schedule.Config{Clock: clock})
		require.NoError(t, err)
		require.Equal(t, want, reports[0].Outcome)
		now, _ := clock.Now(ctx)
		clock.Set(now.Add(time.Minute))
	}
	// schedule_pause, and a tick of a paused entry that pushes nothing.
	require.NoError(t, sched.PauseEntry(ctx, e, "audit-delay"))
	reports, err := sched.RunDue(ctx, e, schedule.Config{Clock: clock})
	require.NoError(t, err)
	require.Equal(t, schedule.TickPaused, reports[1].Outcome)
	require.NoError(t, sched.ResumeEntry(ctx, e, "audit-delay"))

	// A worker running a chain whose next link goes to another queue (and
	// slot): whatever scripts the worker uses for that run too.
	r := runtime.NewRouter()
	var mu sync.Mutex
	var seen []int
	runtime.Register(r, "test.Job", func(ctx context.Context, j testJob) error {
		mu.Lock()
		seen = append(seen, j.N)
		mu.Unlock()
		if j.Tag == "fail" {
			return runtime.FailRequest(errors.New("audit"))
		}
		if err := runtime.Progress(ctx, 50, "audit"); err != nil { // progress
			return err
		}
		if info, _ := runtime.JobInfoFrom(ctx); j.Tag == "flaky" && info.Attempt == 1 {
			return errors.New("flaky")
		}
		return nil
	})
	wctx := runtime.WithDispatcher(ctx, e)
	_, err = runtime.NewPendingDispatch(onQueue(1, "audit-chain")).WithChain(onQueue(2, "audit-next")).Dispatch(wctx)
	require.NoError(t, err)
	// A chain whose next link is grouped: it goes into its group.
	_, err = runtime.NewPendingDispatch(onQueue(9, "audit-chain")).WithChain(groupJob{tagged(10, "tenant", runtime.JobOptions{Queue: "audit-next", GroupLimit: 1})}).Dispatch(wctx)
	require.NoError(t, err)
	// A chain whose next link has a delay: it goes to the delayed set.
	_, err = runtime.NewPendingDispatch(onQueue(7, "audit-chain")).
		WithChain(runtime.NewPendingDispatch(onQueue(8, "audit-next")).Delay(20 * time.Millisecond)).Dispatch(wctx)
	require.NoError(t, err)
	// A unique job: its lock is taken at dispatch and released when it
	// succeeds.
	_, err = runtime.Dispatch(wctx, job(3, runtime.JobOptions{Queue: "audit-chain", UniqueFor: time.Minute}))
	require.NoError(t, err)
	// A batch, created and added to, with a job that succeeds and one that
	// fails, whose callbacks run and are marked as run; and a batch that
	// is cancelled.
	cb := runtime.NewCallback("audit.batch", func(ctx context.Context, kind string, o runtime.Outcome) error { return nil })
	runtime.RegisterCallback(r, cb)
	bid, err := runtime.NewBatch(onQueue(4, "audit-batch")).AllowFailures().
		Catch(cb.With("catch")).Finally(cb.With("finally")).Dispatch(wctx)
	require.NoError(t, err)
	require.NoError(t, runtime.NewInspector(e).Batches().Add(ctx, bid, tagged(5, "fail", runtime.JobOptions{Queue: "audit-batch"})))
	other, err := runtime.NewBatch().Dispatch(wctx)
	require.NoError(t, err)
	require.NoError(t, runtime.NewInspector(e).Batches().Cancel(ctx, other))
	// Job middleware: every job is rate limited, and the flaky job's
	// error is counted by the exception throttle.
	_, err = runtime.Dispatch(wctx, tagged(6, "flaky", runtime.JobOptions{Queue: "audit-chain"}))
	require.NoError(t, err)
	// A debounced job, dispatched twice in its window: the second
	// replaces the first's payload (debounce.lua).
	for _, n := range []int{20, 21} {
		_, err = runtime.NewPendingDispatch(onQueue(n, "audit-chain")).Debounce("audit", 300*time.Millisecond).Dispatch(wctx)
		require.NoError(t, err)
	}
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{
		Queues: []string{"audit-chain", "audit-next", "audit-batch"}, Logger: quiet, Sleep: 20 * time.Millisecond, Tries: 2,
		Prefetch:   2, // so that it holds what it reserves, and starts each job (start.lua)
		Middleware: []runtime.Middleware{runtime.RateLimited("audit", 1000, time.Second), runtime.ThrottlesExceptions(100, time.Minute)},
	})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(wctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 12
	}, "the worker runs the chains, the unique job, the batch, the flaky job twice and the debounced job")
	cancel()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	require.ElementsMatch(t, []int{1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 21}, seen)
	exerciseWorkflowScripts(t, b)
	exerciseLaravelScripts(t, b)
}

// exerciseWorkflowScripts runs workflows whose steps are on queues of
// other slots than the workflow's, and one whose steps share a queue:
// created (wf_create), each step's end
// recorded (wf_settle) and its dependents pushed (step_push), a step that
// spawns (wf_spawn), a workflow cancelled (wf_cancel), and one failed and
// retried (wf_retry).
func exerciseWorkflowScripts(t *testing.T, b bundle) {
	ctx := runtime.WithDispatcher(b.ctx, b.engine)
	var rec wfRec
	r := runtime.NewRouter()
	rec.register(r)
	in := runtime.NewInspector(b.engine)
	wf := runtime.NewWorkflow()
	charge := runtime.AddStep(wf, wfCharge{Order: "a-1"})
	stock := runtime.AddStep(wf, wfStock{Order: "a-1"})
	wfShip{Order: "a-1"}.AddTo(wf, charge, stock)
	runtime.AddStep(wf, wfSplit{Lines: 3})
	ok, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	// Two steps on one queue: the workflow lives in its slot, and each
	// step's end is recorded by its ack (step_ack).
	wf = runtime.NewWorkflow()
	runtime.AddStep(wf, wfStock{Order: "a-5"}, runtime.After(runtime.AddStep(wf, wfStock{Order: "a-4"})))
	home, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(home, "{stock}"), home)
	// A step of more than 1,000 dependents releases them in parts, the
	// first by its ack and the rest a part a call (step_release).
	wf = runtime.NewWorkflow()
	wide := make([]wfStock, 1001)
	for i := range wide {
		wide[i] = wfStock{Order: "a-6-" + strconv.Itoa(i)}
	}
	runtime.AddSteps(wf, wide, runtime.After(runtime.AddStep(wf, wfStock{Order: "a-6"})))
	_, err = wf.Dispatch(ctx)
	require.NoError(t, err)
	wf = runtime.NewWorkflow()
	runtime.AddStep(wf, wfCharge{Order: "a-2", Fail: true})
	failed, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	wf = runtime.NewWorkflow()
	runtime.AddStep(wf, wfStock{Order: "a-3"}, runtime.StepDelay(time.Hour))
	cancelled, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	require.NoError(t, in.CancelWorkflow(ctx, cancelled))
	run := func() {
		w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: wfQueues, Logger: quiet, StopWhenEmpty: true})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
	}
	run()
	require.NoError(t, in.RetryWorkflow(ctx, failed))
	run()
	for id, want := range map[string]runtime.WorkflowState{ok: runtime.WorkflowSucceeded, home: runtime.WorkflowSucceeded, failed: runtime.WorkflowFailed, cancelled: runtime.WorkflowCancelled} {
		info, err := in.Workflow(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, info.State, id)
	}
	require.Equal(t, 2, rec.runs("charge:a-2"), "the failed workflow ran again")
}

// exerciseLaravelScripts runs the Laravel bridge's scripts (laravel_*),
// on queues named in braces as a Laravel app on a cluster names them.
func exerciseLaravelScripts(t *testing.T, b bundle) {
	ctx := b.ctx
	q, err := laravel.NewQueue(b.rdb, laravel.Config{Prefix: b.prefix + ":", HashTag: true})
	require.NoError(t, err)
	job := func(id string) []byte {
		return fmt.Appendf(nil, `{"uuid":"%s","displayName":"App\\Jobs\\X","job":"App\\Jobs\\X@handle","data":[],"id":"%s","attempts":0}`, id, id)
	}
	require.NoError(t, q.Push(ctx, "lv", job("a"), job("b")))          // laravel_push
	require.NoError(t, q.Later(ctx, "lv", time.Millisecond, job("c"))) // laravel_later
	_, _, err = q.Migrate(ctx, "lv")                                   // laravel_migrate
	require.NoError(t, err)
	r1, err := q.Pop(ctx, "lv") // laravel_pop
	require.NoError(t, err)
	require.NotNil(t, r1)
	require.NoError(t, q.Extend(ctx, r1, time.Minute)) // laravel_extend
	require.NoError(t, q.Release(ctx, r1, 0))          // laravel_release
	r2, err := q.Pop(ctx, "lv")
	require.NoError(t, err)
	require.NotNil(t, r2)
	require.NoError(t, q.Delete(ctx, r2)) // laravel_delete
	_, err = q.Sizes(ctx, "lv")           // laravel_sizes
	require.NoError(t, err)
}

// luaScripts maps the SHA1 of each script to its name.
func luaScripts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range lua.All() {
		out[s.SHA] = s.Name
	}
	require.NotEmpty(t, out)
	return out
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
