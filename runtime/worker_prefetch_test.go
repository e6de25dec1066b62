package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestPrefetchedJobsKeepTheirLease(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		runs := map[int]int{}
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			mu.Lock()
			runs[j.N]++
			mu.Unlock()
			time.Sleep(150 * time.Millisecond)
			return nil
		})
		for i := range 6 {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		// One slot and five prefetched: the last waits ~750ms, well past
		// the 300ms lease, while a second worker looks for work.
		cfg := runtime.WorkerConfig{Concurrency: 1, Prefetch: 5, RetryAfter: 300 * time.Millisecond, Timeout: 250 * time.Millisecond, Sleep: 20 * time.Millisecond}
		_, stop1 := b.start(t, cfg)
		time.Sleep(50 * time.Millisecond)
		_, stop2 := b.start(t, cfg)
		eventually(t, func() bool { return len(b.log.of(runtime.JobProcessed)) == 6 }, "all jobs run")
		stop1()
		stop2()
		for i := range 6 {
			require.Equal(t, 1, runs[i], "job %d ran once", i)
		}
	})
}

func TestStopReleasesPrefetchedJobs(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		started := make(chan struct{}, 10)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			started <- struct{}{}
			time.Sleep(200 * time.Millisecond)
			return nil
		})
		for i := range 4 {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		w, stop := b.start(t, runtime.WorkerConfig{Concurrency: 1, Prefetch: 3})
		<-started
		require.Equal(t, runtime.Sizes{Reserved: 4}, sizes(t, b.bundle, "default"), "one running, three prefetched")
		w.Stop()
		stop()
		require.Len(t, b.log.of(runtime.JobProcessed), 1, "the running job finishes")
		require.Equal(t, runtime.Sizes{Ready: 3}, sizes(t, b.bundle, "default"), "the prefetched ones go back")
		require.Len(t, started, 0)
	})
}
