package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// wfBenchJob is a step of the memory benchmark's workflow: a body of
// about 20 bytes, and a result of 10.
type wfBenchJob struct{ Line int }

func (wfBenchJob) JobName() string                { return "bench.WfStep" }
func (wfBenchJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: benchQueue} }
func (j wfBenchJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// BenchmarkWorkflowMemory measures what a workflow keeps in Redis per
// step: while its steps wait (a root and n children after it), and once
// every step has succeeded with a result of 10 bytes (kept until the
// workflow ends plus its retention). One op is the whole measurement
// over 10,000 steps; run it with -benchtime 1x.
func BenchmarkWorkflowMemory(b *testing.B) {
	const n = 10_000
	for range b.N {
		ctx, e := benchEngineWith(b, runtime.EngineConfig{RetryWindow: -1})
		r := runtime.NewRouter()
		runtime.RegisterResult(r, "bench.WfStep", func(ctx context.Context, j wfBenchJob) (string, error) {
			return fmt.Sprintf("%010d", j.Line), nil
		})
		before := usedMemory(b, ctx, e)
		wf := runtime.NewWorkflow()
		root := runtime.AddStep(wf, wfBenchJob{Line: -1})
		for i := range n - 1 {
			runtime.AddStep(wf, wfBenchJob{Line: i}, runtime.After(root))
		}
		t0 := time.Now()
		id, err := e.DispatchWorkflow(ctx, wf)
		b.Logf("dispatch %v", time.Since(t0))
		require.NoError(b, err)
		waiting := usedMemory(b, ctx, e) - before
		w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{benchQueue}, Concurrency: 50, StopWhenEmpty: true, Logger: quiet})
		require.NoError(b, err)
		t0 = time.Now()
		require.NoError(b, w.Run(ctx))
		b.Logf("run %v", time.Since(t0))
		info, err := runtime.NewInspector(e).Workflow(ctx, id)
		require.NoError(b, err)
		require.Equal(b, runtime.WorkflowSucceeded, info.State)
		done := usedMemory(b, ctx, e) - before
		b.ReportMetric(float64(waiting)/n, "B/waiting-step")
		b.ReportMetric(float64(done)/n, "B/ended-step")
	}
}
