package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// BenchmarkWorkerDrainMonitor is BenchmarkWorkerDrain (no prefetch) with
// the worker's record and per-minute counts off and on, written every
// 2s (the default) and every 100ms, to measure what monitoring costs.
// One op is one job.
func BenchmarkWorkerDrainMonitor(b *testing.B) {
	for _, c := range []struct {
		name  string
		every time.Duration
	}{{"off", -1}, {"every=2s", 2 * time.Second}, {"every=100ms", 100 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) {
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
			w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{benchQueue}, Concurrency: 100, StopWhenEmpty: true, Logger: quiet, MonitorEvery: c.every})
			require.NoError(b, err)
			b.ResetTimer()
			require.NoError(b, w.Run(ctx))
			b.StopTimer()
			if c.every > 0 {
				ms, err := runtime.NewInspector(e).Metrics(ctx, time.Now().Add(-time.Hour))
				require.NoError(b, err)
				var done int64
				for _, m := range ms {
					done += m.Processed
				}
				require.Equal(b, int64(n), done, "every job counted")
			}
			if sec := b.Elapsed().Seconds(); sec > 0 {
				b.ReportMetric(float64(n)/sec, "jobs/s")
			}
		})
	}
}
