package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// benchJob is the job of the worker benchmarks.
type benchJob struct{ N int }

func (benchJob) JobName() string                { return "bench.Job" }
func (benchJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: benchQueue} }
func (j benchJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// startBenchWorker runs a worker on the benchmark queue with handle as
// its handler until the benchmark ends.
func startBenchWorker(b *testing.B, ctx context.Context, e *runtime.Engine, cfg runtime.WorkerConfig, handle func(context.Context, benchJob) error) {
	b.Helper()
	r := runtime.NewRouter()
	runtime.Register(r, "bench.Job", handle)
	cfg.Queues = []string{benchQueue}
	cfg.Logger = quiet
	w, err := runtime.NewWorker(e, r, cfg)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	b.Cleanup(func() {
		cancel()
		<-done
	})
}

func reportPercentiles(b *testing.B, lat []time.Duration, unit time.Duration, name string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		i := min(max(int(float64(len(lat))*p/100+0.5)-1, 0), len(lat)-1)
		return float64(lat[i]) / float64(unit)
	}
	b.ReportMetric(at(50), "p50-"+name)
	b.ReportMetric(at(99), "p99-"+name)
}

// BenchmarkWorkerPickupLatency measures, one job at a time, how long a
// job takes from dispatch to its handler starting on an idle worker that
// waits on the queue's doorbell. One op is one job.
func BenchmarkWorkerPickupLatency(b *testing.B) {
	ctx, e := benchEngine(b)
	started := make(chan time.Time, 1)
	startBenchWorker(b, ctx, e, runtime.WorkerConfig{Concurrency: 4}, func(context.Context, benchJob) error {
		started <- time.Now()
		return nil
	})
	time.Sleep(50 * time.Millisecond) // let the worker go idle
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		_, err := e.Dispatch(ctx, runtime.NewPendingDispatch(benchJob{}))
		require.NoError(b, err)
		lat = append(lat, (<-started).Sub(t0))
	}
	reportPercentiles(b, lat, time.Microsecond, "us")
}

// BenchmarkWorkerDelayedLatency dispatches jobs delayed by 20ms, one at a
// time, and measures how late after its due time each handler starts.
// One op is one job.
func BenchmarkWorkerDelayedLatency(b *testing.B) {
	ctx, e := benchEngine(b)
	started := make(chan time.Time, 1)
	startBenchWorker(b, ctx, e, runtime.WorkerConfig{Concurrency: 4}, func(context.Context, benchJob) error {
		started <- time.Now()
		return nil
	})
	const delay = 20 * time.Millisecond
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		_, err := e.Dispatch(ctx, runtime.NewPendingDispatch(benchJob{}).Delay(delay))
		require.NoError(b, err)
		lat = append(lat, (<-started).Sub(t0.Add(delay)))
	}
	reportPercentiles(b, lat, time.Millisecond, "ms-late")
}

// BenchmarkWorkerDrain pushes b.N jobs, then times one worker with 100
// slots running them with an empty handler until the queue is empty,
// without and with prefetch. One op is one job.
func BenchmarkWorkerDrain(b *testing.B) {
	for _, prefetch := range []int{0, 100} {
		b.Run(fmt.Sprintf("prefetch=%d", prefetch), func(b *testing.B) {
			ctx, e := benchEngine(b)
			n := max(b.N, 1000)
			out := make([]runtime.Outgoing, 0, n)
			for range n {
				env := benchEnv()
				env.Body, _ = runtime.Encode(benchJob{})
				out = append(out, runtime.Outgoing{Envelope: env})
			}
			require.NoError(b, e.PushMany(ctx, out))
			r := runtime.NewRouter()
			runtime.Register(r, "bench.Job", func(context.Context, benchJob) error { return nil })
			w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{benchQueue}, Concurrency: 100, Prefetch: prefetch, StopWhenEmpty: true, Logger: quiet})
			require.NoError(b, err)
			b.ResetTimer()
			require.NoError(b, w.Run(ctx))
			b.StopTimer()
			s, err := runtime.NewInspector(e).Sizes(ctx, benchQueue)
			require.NoError(b, err)
			require.Zero(b, s.Total(), "every job ran")
			if sec := b.Elapsed().Seconds(); sec > 0 {
				b.ReportMetric(float64(n)/sec, "jobs/s")
			}
		})
	}
}
