package runtime_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
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

func TestWorkerWarnsWhenRedisMayEvict(t *testing.T) {
	be := redistest.Backends(t)[0]
	b := setup(t, be, runtime.EngineConfig{})
	run := func() string {
		var buf bytes.Buffer
		w, err := runtime.NewWorker(b.engine, runtime.NewRouter(), runtime.WorkerConfig{
			Once: true, Sleep: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&buf, nil)),
		})
		require.NoError(t, err)
		require.NoError(t, w.Run(b.ctx))
		return buf.String()
	}
	policy, err := b.rdb.ConfigGet(b.ctx, "maxmemory-policy").Result()
	require.NoError(t, err)
	require.Equal(t, "noeviction", policy["maxmemory-policy"])
	require.NotContains(t, run(), "maxmemory-policy")

	// The shared test server has no maxmemory, so nothing is evicted while
	// the policy is changed for this check.
	require.NoError(t, b.rdb.ConfigSet(b.ctx, "maxmemory-policy", "allkeys-lru").Err())
	t.Cleanup(func() { b.rdb.ConfigSet(context.Background(), "maxmemory-policy", "noeviction") })
	out := run()
	require.Contains(t, out, "level=WARN")
	require.Contains(t, out, "maxmemory-policy=allkeys-lru")
}
