package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// A job's outcome takes effect only through a settle that Redis accepts:
// the tests here take a running job's reservation away, as another
// worker does when it takes over a job whose lease ran out, and check
// that the worker that lost it reports and triggers nothing.

// steal gives the reservation of job id on queue to another worker's
// token, as a takeover after the lease ran out does.
func steal(t *testing.T, b wbundle, queue, id string) {
	t.Helper()
	require.NoError(t, b.rdb.HSet(b.ctx, b.prefix+":{"+queue+"}:state", id, "1:0:another-workers-token").Err())
}

func TestStaleFailRunsNoCatchAndCountsNothing(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var c caught
		cb := c.callback("test.catch")
		runtime.RegisterCallback(b.router, cb)
		var ran atomic.Int32
		runtime.Register(b.router, "test.Step", func(ctx context.Context, j stepJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			ran.Add(1)
			steal(t, b, info.Queue, info.ID)
			return runtime.FailRequest(errors.New("gives up"))
		})
		_, err := runtime.Chain(stepJob{Step: "a"}, stepJob{Step: "b"}).Catch(cb.With("chain")).Dispatch(b.ctx)
		require.NoError(t, err)
		batchID, err := runtime.NewBatch(stepJob{Step: "c"}).Catch(cb.With("batch")).Dispatch(b.ctx)
		require.NoError(t, err)

		_, stop := b.start(t, runtime.WorkerConfig{})
		eventually(t, func() bool { return ran.Load() == 2 }, "both jobs ran")
		time.Sleep(200 * time.Millisecond)
		stop()

		require.Empty(t, c.list(), "a refused fail runs no catch")
		require.Empty(t, b.log.of(runtime.JobFailed), "a refused fail emits no JobFailed")
		require.Empty(t, b.failed(t, "default"))
		st, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, batchID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Zero(t, st.Failed, "the batch counts no failure")
		require.False(t, st.Cancelled(), "the batch is not cancelled")
	})
}

func TestStaleSuccessTellsNobody(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var ran atomic.Int32
		var next atomic.Int32
		runtime.Register(b.router, "test.Step", func(ctx context.Context, j stepJob) error {
			if j.Step == "b" {
				next.Add(1)
				return nil
			}
			info, _ := runtime.JobInfoFrom(ctx)
			ran.Add(1)
			steal(t, b, info.Queue, info.ID)
			return nil
		})
		_, err := runtime.Chain(stepJob{Step: "a"}, stepJob{Step: "b"}).Dispatch(b.ctx)
		require.NoError(t, err)
		b.dispatch(t, stepJob{Step: "plain"})

		_, stop := b.start(t, runtime.WorkerConfig{})
		eventually(t, func() bool { return ran.Load() == 2 }, "both jobs ran")
		time.Sleep(200 * time.Millisecond)
		stop()

		require.Zero(t, next.Load(), "the chain's next link is not dispatched")
		require.Empty(t, b.log.of(runtime.JobProcessed), "a refused ack emits no JobProcessed")
	})
}

func TestStaleReleaseEmitsNoJobReleased(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var ran atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			ran.Add(1)
			steal(t, b, info.Queue, info.ID)
			return runtime.ReleaseRequest(0)
		})
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 3}))
		_, stop := b.start(t, runtime.WorkerConfig{})
		eventually(t, func() bool { return ran.Load() == 1 }, "the job ran")
		time.Sleep(200 * time.Millisecond)
		stop()
		require.Empty(t, b.log.of(runtime.JobReleased), "a refused release emits no JobReleased")
	})
}

// A worker that dies after the failed store took a job, before the
// job's hooks ran, leaves them due; another worker's sweep runs them.
func TestFailHooksLeftUndoneRunElsewhere(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var c caught
		cb := c.callback("test.catch")
		runtime.RegisterCallback(b.router, cb)
		runtime.Register(b.router, "test.Step", func(ctx context.Context, j stepJob) error { return nil })
		_, err := runtime.Chain(stepJob{Step: "a"}, stepJob{Step: "b"}).Catch(cb.With("chain")).Dispatch(b.ctx)
		require.NoError(t, err)

		// The dead worker: it reserved the job, recorded its hooks as
		// due and failed it, then died.
		got, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "default", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, got.Jobs, 1)
		ref := got.Jobs[0].Ref
		require.NoError(t, b.engine.HooksDue(b.ctx, ref))
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: ref, Name: "test.Step", Err: errors.New("boom"), Attempts: 1}))
		// A fail that never went through leaves an entry that is dropped.
		require.NoError(t, b.engine.HooksDue(b.ctx, runtime.Ref{Queue: "default", ID: "never-failed", Token: "t"}))

		_, stop := b.start(t, runtime.WorkerConfig{RetryAfter: 300 * time.Millisecond, Timeout: 200 * time.Millisecond})
		eventually(t, func() bool { return len(c.list()) == 1 }, "the sweep runs the catch")
		require.Equal(t, []string{"chain: test.Step boom"}, c.list())
		eventually(t, func() bool {
			n, err := b.rdb.ZCard(b.ctx, b.prefix+":{default}:hooks").Result()
			return err == nil && n == 0
		}, "the hooks set empties")
		time.Sleep(700 * time.Millisecond)
		stop()
		require.Len(t, c.list(), 1, "the catch runs once")
	})
}

// A job that a graceful stop cuts short goes back with its attempt
// returned: with one try it runs again, on the next worker, as attempt 1.
func TestStopCutsShortWithoutUsingAnAttempt(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var started, finished atomic.Int32
		var mu sync.Mutex
		var attempts []int
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			attempts = append(attempts, info.Attempt)
			mu.Unlock()
			started.Add(1)
			select {
			case <-time.After(time.Duration(j.N) * time.Millisecond):
				finished.Add(1)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		b.dispatch(t, job(3000, runtime.JobOptions{Tries: 1}))
		_, stop := b.start(t, runtime.WorkerConfig{Grace: 100 * time.Millisecond})
		eventually(t, func() bool { return started.Load() == 1 }, "the job started")
		stop()
		s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, int64(1), s.Ready, "the job is back on its queue")
		require.Empty(t, b.failed(t, "default"))
		rel := b.log.of(runtime.JobReleased)
		require.Len(t, rel, 1, "the give-back is reported as a release")
		require.ErrorIs(t, rel[0].Err, runtime.ErrWorkerStopping)

		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Grace: 10 * time.Second})
		require.Equal(t, int32(1), finished.Load(), "it runs to the end on the next worker")
		mu.Lock()
		require.Equal(t, []int{1, 1}, attempts, "the cut-short attempt was returned")
		mu.Unlock()
		require.Empty(t, b.failed(t, "default"))
	})
}

// A handler that finishes after the grace, while the worker still waits
// for it, has its result recorded: its job is acked, not run again.
func TestHandlerFinishingAfterGraceIsAcked(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			runs.Add(1)
			time.Sleep(400 * time.Millisecond) // ignores its context for a while
			return nil
		})
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 3}))
		_, stop := b.start(t, runtime.WorkerConfig{Grace: 100 * time.Millisecond})
		eventually(t, func() bool { return runs.Load() == 1 }, "the job started")
		stop()
		s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, runtime.Sizes{}, s, "the job is acked")
		require.Len(t, b.log.of(runtime.JobProcessed), 1)
		require.Empty(t, b.log.of(runtime.JobReleased))
	})
}

// A job its middleware releases on its last try fails with that reason,
// not as an attempt that did not finish.
func TestReleasedOnLastTryFailsWithTheReason(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			return runtime.RateLimited("test-limit-"+b.prefix, 2, time.Second).Handle(ctx, func(context.Context) error { return nil })
		})
		for i := range 6 {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		_, stop := b.start(t, runtime.WorkerConfig{})
		eventually(t, func() bool { return len(b.failed(t, "default")) == 4 }, "four jobs fail")
		stop()
		fs := b.failed(t, "default")
		for _, f := range fs {
			require.Contains(t, f.Error, "released by its handler or middleware on attempt 1 of 1")
			require.NotContains(t, f.Error, "did not finish")
		}
	})
}

// loseReplies is a go-redis hook that lets the first calls of a script
// reach Redis and then loses their replies, as a connection that breaks
// after sending does.
type loseReplies struct {
	sha  string
	mu   sync.Mutex
	left int
}

func (h *loseReplies) lose(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 || fmt.Sprint(args[0]) != "evalsha" || fmt.Sprint(args[1]) != h.sha {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.left == 0 {
		return false
	}
	h.left--
	return true
}

var errReplyLost = errors.New("simulated: connection reset after the call was sent")

func (h *loseReplies) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *loseReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.lose(cmd) {
			cmd.SetErr(errReplyLost)
			return errReplyLost
		}
		return err
	}
}

func (h *loseReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		lost := false
		for _, c := range cmds {
			if h.lose(c) {
				c.SetErr(errReplyLost)
				lost = true
			}
		}
		if lost {
			return errReplyLost
		}
		return err
	}
}

// An ack whose first try went through, but whose reply was lost, is
// refused when tried again: the job is gone. That is logged as what it
// is, not as a lost lease, and the job counts as processed.
func TestAckRetriedAfterLostReplyIsNotALostLease(t *testing.T) {
	forEachBusBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, be redistest.Backend) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { runs.Add(1); return nil })
		b.dispatch(t, job(1, runtime.JobOptions{}))
		e := b.open(t, be, runtime.EngineConfig{})
		e.Client().AddHook(&loseReplies{sha: runtime.ScriptSHA("ack"), left: 1})
		var logs syncBuffer
		w, err := runtime.NewWorker(e, b.router, runtime.WorkerConfig{StopWhenEmpty: true, Sleep: 20 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, err)
		w.Subscribe(b.log.add)
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		require.NoError(t, w.Run(ctx))
		require.Equal(t, int32(1), runs.Load())
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
		out := logs.String()
		require.Contains(t, out, "an earlier try of the ack went through")
		require.NotContains(t, out, "lease was lost")
		require.NotContains(t, out, "may run again")
		require.Len(t, b.log.of(runtime.JobProcessed), 1, "the job was processed")
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Hooks that run longer than RetryAfter on a live worker are not taken
// for abandoned: the worker's heartbeat renews their record, and another
// worker's sweep leaves them alone.
func TestSlowHooksOfALiveWorkerRunOnce(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var hooks atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			return runtime.FailRequest(errors.New("no"))
		}, runtime.OnFailed(func(ctx context.Context, j testJob, err error) {
			hooks.Add(1)
			time.Sleep(1200 * time.Millisecond)
		}))
		cfg := runtime.WorkerConfig{RetryAfter: 300 * time.Millisecond, Timeout: 200 * time.Millisecond}
		_, stop1 := b.start(t, cfg)
		_, stop2 := b.start(t, cfg)
		b.dispatch(t, job(1, runtime.JobOptions{}))
		eventually(t, func() bool { return hooks.Load() == 1 }, "the failed hook runs")
		time.Sleep(1500 * time.Millisecond)
		stop1()
		stop2()
		require.Equal(t, int32(1), hooks.Load(), "the failed hook runs once")
	})
}

// A handler that ignores the stop past the abandon bound still runs: its
// job goes back keeping the attempt, so a handler that always hangs runs
// out of tries instead of coming back at every deploy.
func TestAbandonedAtStopKeepsTheAttempt(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		var attempts []int
		release := make(chan struct{})
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			attempts = append(attempts, info.Attempt)
			n := len(attempts)
			mu.Unlock()
			if n == 1 {
				<-release // ignores its context
			}
			return nil
		})
		defer close(release)
		b.dispatch(t, job(1, runtime.JobOptions{Tries: 3}))
		_, stop := b.start(t, runtime.WorkerConfig{Grace: 100 * time.Millisecond})
		eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) == 1 }, "the job started")
		stop()
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []int{1, 2}, attempts, "the abandoned attempt counts")
	})
}
