package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestWorkerRunsJobs(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, fmt.Sprint(j.N))
			return nil
		})
		for i := range 50 {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		w := b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 8})
		require.Equal(t, "empty", w.StopReason())
		require.ElementsMatch(t, seq(50), rec.list())
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
		for _, info := range rec.infos() {
			require.Equal(t, 1, info.Attempt)
			require.Len(t, info.ID, 26)
			require.Equal(t, "default", info.Queue)
		}
	})
}

func seq(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(i)
	}
	return out
}

func TestWorkerPriorityOrder(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, j.opts.Queue+"?"+fmt.Sprint(j.N))
			info, _ := runtime.JobInfoFrom(ctx)
			rec.mu.Lock()
			rec.seen[len(rec.seen)-1] = info.Queue
			rec.mu.Unlock()
			return nil
		})
		for i := range 3 {
			b.dispatch(t, onQueue(i, "low"))
		}
		for i := range 3 {
			b.dispatch(t, onQueue(i, "default"))
		}
		for i := range 3 {
			b.dispatch(t, onQueue(i, "high"))
		}
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"high", "default", "low"}, Concurrency: 1, StopWhenEmpty: true})
		require.Equal(t, []string{"high", "high", "high", "default", "default", "default", "low", "low", "low"}, rec.list())
	})
}

func TestWorkerRetriesOnBackoff(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, "")
			if info, _ := runtime.JobInfoFrom(ctx); info.Attempt < 3 {
				return fmt.Errorf("flaky %d", info.Attempt)
			}
			return nil
		})
		id := b.dispatch(t, job(1, runtime.JobOptions{Tries: 3, Backoff: []time.Duration{150 * time.Millisecond, 300 * time.Millisecond}}))[0]
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: false, MaxJobs: 3})
		require.Len(t, rec.at, 3)
		require.GreaterOrEqual(t, rec.at[1].Sub(rec.at[0]), 150*time.Millisecond)
		require.GreaterOrEqual(t, rec.at[2].Sub(rec.at[1]), 300*time.Millisecond)
		var delays []time.Duration
		for _, e := range b.log.of(runtime.JobReleased) {
			delays = append(delays, e.Delay)
			require.ErrorContains(t, e.Err, "flaky")
		}
		require.Equal(t, []time.Duration{150 * time.Millisecond, 300 * time.Millisecond}, delays)
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
		require.Equal(t, []runtime.EventKind{
			runtime.JobQueued,
			runtime.JobProcessing, runtime.JobExceptionOccurred, runtime.JobReleased,
			runtime.JobProcessing, runtime.JobExceptionOccurred, runtime.JobReleased,
			runtime.JobProcessing, runtime.JobProcessed,
		}, b.log.kinds(id))
	})
}

func TestWorkerDefaultBackoffRepeatsLastAndExponential(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return errors.New("no") })
		b.dispatch(t, job(1, runtime.JobOptions{}))
		b.runToEnd(t, runtime.WorkerConfig{Tries: 4, Backoff: []time.Duration{10 * time.Millisecond, 40 * time.Millisecond}, MaxJobs: 4})
		var delays []time.Duration
		for _, e := range b.log.of(runtime.JobReleased) {
			delays = append(delays, e.Delay)
		}
		require.Equal(t, []time.Duration{10 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}, delays)
		require.Len(t, b.log.of(runtime.JobFailed), 1)
	})
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return errors.New("no") })
		b.dispatch(t, job(1, runtime.JobOptions{}))
		b.runToEnd(t, runtime.WorkerConfig{Tries: 5, ExponentialBackoff: &runtime.ExponentialBackoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond}, MaxJobs: 5})
		var delays []time.Duration
		for _, e := range b.log.of(runtime.JobReleased) {
			delays = append(delays, e.Delay)
		}
		require.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond}, delays)
	})
}

func TestWorkerFailsWhenTriesAreUsedUp(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var hooked atomic.Value
		runtime.Register(b.router, "test.Job",
			func(ctx context.Context, j testJob) error { return errors.New("smtp down") },
			runtime.OnFailed(func(ctx context.Context, j testJob, err error) { hooked.Store(fmt.Sprint(j.N, ": ", err)) }))
		id := b.dispatch(t, job(7, runtime.JobOptions{Tries: 2}))[0]
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 2})

		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Equal(t, id, fs[0].ID)
		require.Equal(t, "test.Job", fs[0].Name)
		require.Equal(t, 2, fs[0].Attempts)
		require.Contains(t, fs[0].Error, "smtp down")
		require.Contains(t, fs[0].Error, "failed after")
		require.Equal(t, "7: "+fs[0].Error, hooked.Load())
		failedEvents := b.log.of(runtime.JobFailed)
		require.Len(t, failedEvents, 1)
		require.ErrorIs(t, failedEvents[0].Err, runtime.ErrMaxAttempts)
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
	})
}

func TestWorkerRetryUntil(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			runs.Add(1)
			return errors.New("not yet")
		})
		// Tries 1 would fail at once; retry-until takes precedence.
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 1, RetryUntil: 400 * time.Millisecond, Backoff: []time.Duration{50 * time.Millisecond}}))
		_, stop := b.start(t, runtime.WorkerConfig{})
		eventually(t, func() bool { return len(b.log.of(runtime.JobFailed)) == 1 }, "job fails once retry-until passes")
		stop()
		require.Greater(t, runs.Load(), int32(2))
		require.ErrorIs(t, b.log.of(runtime.JobFailed)[0].Err, runtime.ErrRetryUntil)
	})
}

func TestWorkerMaxExceptions(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			if runs.Add(1) == 1 {
				return runtime.ReleaseRequest(0) // a release is not an exception
			}
			return errors.New("boom")
		})
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 10, MaxExceptions: 2}))
		_, stop := b.start(t, runtime.WorkerConfig{})
		eventually(t, func() bool { return len(b.log.of(runtime.JobFailed)) == 1 }, "job fails at its second exception")
		stop()
		require.Equal(t, int32(3), runs.Load())
		require.ErrorIs(t, b.log.of(runtime.JobFailed)[0].Err, runtime.ErrMaxExceptions)
	})
}

func TestWorkerTimeout(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			runs.Add(1)
			<-ctx.Done()
			return ctx.Err()
		})
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 2, Timeout: 100 * time.Millisecond}))
		b.dispatch(t, tagged(2, "fot", runtime.JobOptions{Tries: 5, Timeout: 100 * time.Millisecond, FailOnTimeout: true}))
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 3, Concurrency: 2})

		require.Equal(t, int32(3), runs.Load(), "2 attempts, then 1 with fail-on-timeout")
		require.Len(t, b.log.of(runtime.JobTimedOut), 3)
		for _, e := range b.log.of(runtime.JobTimedOut) {
			require.ErrorIs(t, e.Err, runtime.ErrTimeout)
			require.GreaterOrEqual(t, e.Duration, 100*time.Millisecond)
		}
		fs := b.failed(t, "default")
		require.Len(t, fs, 2)
		byAttempts := map[int]bool{}
		for _, f := range fs {
			require.Contains(t, f.Error, "timed out")
			byAttempts[f.Attempts] = true
		}
		require.Equal(t, map[int]bool{1: true, 2: true}, byAttempts)
	})
}

// TestWorkerHandlerContext checks what a handler's context carries: the
// attempt's deadline, the job's info, and an end with cause ErrTimeout
// that reaches contexts derived from it.
func TestWorkerHandlerContext(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		type seen struct {
			left    time.Duration
			hasDl   bool
			info    runtime.JobInfo
			hasInfo bool
			cause   error
			child   error
		}
		got := make(chan seen, 1)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			var s seen
			dl, ok := ctx.Deadline()
			s.left, s.hasDl = time.Until(dl), ok
			s.info, s.hasInfo = runtime.JobInfoFrom(ctx)
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			<-child.Done()
			s.cause, s.child = context.Cause(ctx), context.Cause(child)
			got <- s
			return ctx.Err()
		})
		ids := b.dispatch(t, job(1, runtime.JobOptions{Timeout: 300 * time.Millisecond}))
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 1})

		s := <-got
		require.True(t, s.hasDl)
		require.Greater(t, s.left, 200*time.Millisecond)
		require.LessOrEqual(t, s.left, 300*time.Millisecond)
		require.True(t, s.hasInfo)
		at, _ := runtime.IDTime(ids[0])
		require.Equal(t, runtime.JobInfo{ID: ids[0], Name: "test.Job", Queue: "default", Attempt: 1, Worker: "worker", DispatchedAt: time.UnixMilli(at)}, s.info)
		require.ErrorIs(t, s.cause, runtime.ErrTimeout)
		require.ErrorIs(t, s.child, runtime.ErrTimeout)
		require.Len(t, b.log.of(runtime.JobTimedOut), 1)
	})
}

func TestWorkerAbandonsHandlerThatIgnoresItsContext(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			<-release
			return nil
		})
		b.dispatch(t, job(1, runtime.JobOptions{Timeout: 50 * time.Millisecond}))
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 1})
		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Contains(t, fs[0].Error, "timed out")
	})
}

func TestWorkerPanics(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			panic("nil map")
		})
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 2}))
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 2})
		exc := b.log.of(runtime.JobExceptionOccurred)
		require.Len(t, exc, 2)
		var pe *runtime.PanicError
		require.ErrorAs(t, exc[0].Err, &pe)
		require.Equal(t, "nil map", pe.Value)
		require.Contains(t, string(pe.Stack), "worker_test.go")
		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Contains(t, fs[0].Error, "handler panicked: nil map")
	})
}

func TestHandlerControlsItsJob(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			rec.add(ctx, fmt.Sprint(j.Tag, info.Attempt))
			switch {
			case j.Tag == "release" && info.Attempt == 1:
				return runtime.ReleaseRequest(100 * time.Millisecond)
			case j.Tag == "fail":
				return runtime.FailRequest(errors.New("card declined"))
			case j.Tag == "delete":
				return runtime.DeleteRequest()
			}
			return nil
		})
		ids := b.dispatch(t,
			tagged(1, "release", runtime.JobOptions{Tries: 5}),
			tagged(2, "fail", runtime.JobOptions{Tries: 5}),
			tagged(3, "delete", runtime.JobOptions{Tries: 5}))
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 4, Concurrency: 3})

		require.ElementsMatch(t, []string{"release1", "release2", "fail1", "delete1"}, rec.list())
		rel := b.log.of(runtime.JobReleased)
		require.Len(t, rel, 1)
		require.Equal(t, ids[0], rel[0].ID)
		require.Equal(t, 100*time.Millisecond, rel[0].Delay)

		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Equal(t, ids[1], fs[0].ID)
		require.Equal(t, "card declined", fs[0].Error)
		require.Equal(t, 1, fs[0].Attempts)
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
		require.Empty(t, b.log.of(runtime.JobExceptionOccurred))
	})
}

func TestWorkerFailsPoisonJobsAndCarriesOn(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, fmt.Sprint(j.N))
			return nil
		})
		qk := b.prefix + ":{default}:"
		require.NoError(t, b.rdb.HSet(b.ctx, qk+"payloads", "garbage", []byte{0xc1, 0x00}).Err())
		require.NoError(t, b.rdb.RPush(b.ctx, qk+"ready", "garbage").Err())
		require.NoError(t, b.engine.Push(b.ctx, &runtime.Envelope{ID: "unknown", Name: "test.Nobody", Queue: "default"}))
		require.NoError(t, b.engine.Push(b.ctx, &runtime.Envelope{ID: "badbody", Name: "test.Job", Queue: "default", Body: []byte("not msgpack")}))
		b.dispatch(t, job(42, runtime.JobOptions{}))

		w := b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Tries: 3})
		require.Equal(t, []string{"42"}, rec.list())
		require.Zero(t, w.Tracked(), "a job failed before it ran still had its lease kept")
		got := map[string]string{}
		for _, f := range b.failed(t, "default") {
			got[f.ID] = f.Error
			require.Equal(t, 1, f.Attempts, "poison is failed at once, not retried")
		}
		require.Len(t, got, 3)
		require.Contains(t, got["garbage"], "cannot decode job garbage")
		require.Contains(t, got["unknown"], `no handler registered for job "test.Nobody"`)
		require.Contains(t, got["badbody"], "does not decode")
		fs, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", "garbage")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, []byte{0xc1, 0x00}, fs.Payload, "the raw payload is kept")
	})
}

func TestHeartbeatKeepsLongJobFromRunningTwice(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			runs.Add(1)
			select {
			case <-time.After(1200 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		// The job's own timeout is far longer than the workers' lease.
		b.dispatch(t, job(1, runtime.JobOptions{Timeout: 10 * time.Second}))
		cfg := runtime.WorkerConfig{RetryAfter: 300 * time.Millisecond, Timeout: 200 * time.Millisecond, Sleep: 20 * time.Millisecond}
		cfg.Name = "w1"
		_, stop1 := b.start(t, cfg)
		cfg.Name = "w2"
		_, stop2 := b.start(t, cfg)
		eventually(t, func() bool { return len(b.log.of(runtime.JobProcessed)) == 1 }, "job finishes")
		stop1()
		stop2()
		require.Equal(t, int32(1), runs.Load(), "a second worker never took the job")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
	})
}

// TestAckTriedAgainThroughAnOutage fails every ack for 600 ms, as a Redis
// that is down would: the worker tries the ack again until it gets
// through, and the job does not run again when its lease runs out.
func TestAckTriedAgainThroughAnOutage(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(context.Context, testJob) error {
			runs.Add(1)
			return nil
		})
		hook := &dropScripts{shas: map[string]bool{runtime.ScriptSHA("ack"): true}, until: time.Now().Add(600 * time.Millisecond)}
		b.rdb.AddHook(hook)
		b.dispatch(t, job(1, runtime.JobOptions{}))
		cfg := runtime.WorkerConfig{RetryAfter: 1500 * time.Millisecond, Timeout: time.Second, Sleep: 20 * time.Millisecond, Logger: quiet}
		_, stop := b.start(t, cfg)
		eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, "the job is acked")
		require.NotZero(t, hook.dropped(), "an ack failed")
		time.Sleep(2 * time.Second) // past the lease, had the ack been given up
		stop()
		require.Equal(t, int32(1), runs.Load(), "the job ran once")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"),
			"the job is done: not taken again as an attempt that did not finish, and failed")
	})
}

// TestFailTriedAgainThroughAnOutage fails every move to the failed store
// for 600 ms: the worker tries it again, and the job is failed with its
// handler's error, not later as an attempt that did not finish.
func TestFailTriedAgainThroughAnOutage(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(context.Context, testJob) error {
			runs.Add(1)
			return errors.New("smtp down")
		})
		hook := &dropScripts{shas: map[string]bool{runtime.ScriptSHA("fail"): true}, until: time.Now().Add(600 * time.Millisecond)}
		b.rdb.AddHook(hook)
		id := b.dispatch(t, job(1, runtime.JobOptions{Tries: 1}))[0]
		cfg := runtime.WorkerConfig{RetryAfter: 1500 * time.Millisecond, Timeout: time.Second, Sleep: 20 * time.Millisecond, Logger: quiet}
		_, stop := b.start(t, cfg)
		eventually(t, func() bool { return sizes(t, b.bundle, "default").Failed == 1 }, "the job is failed")
		require.NotZero(t, hook.dropped(), "a move to the failed store failed")
		time.Sleep(2 * time.Second) // past the lease, had the fail been given up
		stop()
		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Equal(t, id, fs[0].ID)
		require.Contains(t, fs[0].Error, "smtp down", "failed with the handler's error")
		require.Equal(t, int32(1), runs.Load())
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
	})
}

func TestLostLeaseCancelsHandler(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		cause := make(chan error, 1)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		})
		b.dispatch(t, job(1, runtime.JobOptions{Timeout: 10 * time.Second}))
		_, stop := b.start(t, runtime.WorkerConfig{RetryAfter: 300 * time.Millisecond, Timeout: 200 * time.Millisecond})
		eventually(t, func() bool { return len(b.log.of(runtime.JobProcessing)) == 1 }, "job starts")
		// Another party takes the reservation: its token changes, under a
		// lease of its own.
		id := b.log.of(runtime.JobProcessing)[0].ID
		require.NoError(t, b.rdb.HSet(b.ctx, b.prefix+":{default}:state", id, "1:0:someone-else").Err())
		require.NoError(t, b.rdb.ZAddXX(b.ctx, b.prefix+":{default}:reserved", redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: id}).Err())
		select {
		case err := <-cause:
			require.ErrorIs(t, err, runtime.ErrLeaseLost)
		case <-time.After(5 * time.Second):
			t.Fatal("handler context not cancelled after its lease was lost")
		}
		stop()
		require.Empty(t, b.log.of(runtime.JobProcessed))
		require.Empty(t, b.log.of(runtime.JobFailed))
		require.Equal(t, runtime.Sizes{Reserved: 1}, sizes(t, b.bundle, "default"), "the new holder keeps the job")
	})
}

func TestWorkerChainHook(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, fmt.Sprint(j.N))
			if j.Tag == "fail" {
				return runtime.FailRequest(errors.New("stop the chain"))
			}
			return nil
		})
		_, err := runtime.NewPendingDispatch(job(1, runtime.JobOptions{})).
			WithChain(job(2, runtime.JobOptions{}), onQueue(3, "other"), job(4, runtime.JobOptions{})).
			Dispatch(b.ctx)
		require.NoError(t, err)
		_, err = runtime.NewPendingDispatch(job(10, runtime.JobOptions{})).
			WithChain(tagged(11, "fail", runtime.JobOptions{}), job(12, runtime.JobOptions{})).
			Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"default", "other"}, StopWhenEmpty: true, Concurrency: 1})
		got := rec.list()
		require.ElementsMatch(t, []string{"1", "2", "3", "4", "10", "11"}, got)
		pos := map[string]int{}
		for i, s := range got {
			pos[s] = i
		}
		require.Less(t, pos["1"], pos["2"])
		require.Less(t, pos["2"], pos["3"])
		require.Less(t, pos["3"], pos["4"])
		require.Len(t, b.failed(t, "default"), 1)
	})
}
