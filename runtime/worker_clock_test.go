package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestSkewedWorkerClockRunsNothingEarly(t *testing.T) {
	for _, skew := range []time.Duration{30 * time.Second, -30 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				var mu sync.Mutex
				ran := map[int]time.Time{}
				runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
					mu.Lock()
					ran[j.N] = time.Now()
					mu.Unlock()
					return nil
				})
				sent := time.Now()
				_, err := runtime.NewPendingDispatch(job(1, runtime.JobOptions{})).Delay(300 * time.Millisecond).Dispatch(b.ctx)
				require.NoError(t, err)
				b.dispatch(t, job(2, runtime.JobOptions{}))
				clock := func() time.Time { return time.Now().Add(skew) }
				_, stop := b.start(t, runtime.WorkerConfig{Clock: clock, Concurrency: 2})
				eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) == 2 }, "both jobs run")
				stop()
				require.GreaterOrEqual(t, ran[1].Sub(sent), 300*time.Millisecond, "the delayed job did not run early")
				require.Len(t, b.log.of(runtime.JobProcessed), 2, "each ran once")
			})
		})
	}
}

func TestRetryUntilIsReadOnTheWorkerClock(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		b.dispatch(t, job(1, runtime.JobOptions{RetryUntil: time.Minute}))
		ahead := func() time.Time { return time.Now().Add(time.Hour) }
		b.runToEnd(t, runtime.WorkerConfig{Clock: ahead, MaxJobs: 1})
		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Contains(t, fs[0].Error, "retry-until")
	})
}
