package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// wfOnce fails for good on its first run and succeeds after.
type wfOnce struct{ Key string }

func (wfOnce) JobName() string                { return "wf.Once" }
func (wfOnce) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "pay"} }
func (j wfOnce) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// A step that failed its workflow, retried from the failed store, runs
// and succeeds, but its workflow has counted it failed: nothing after it
// runs, and its worker says so, naming the way that does
// (queue:workflow-retry), rather than dropping the success in silence.
func TestWorkflowStepRetriedFromTheFailedStoreSaysSo(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		var mu sync.Mutex
		runs := 0
		runtime.Register(b.router, "wf.Once", func(ctx context.Context, j wfOnce) error {
			mu.Lock()
			defer mu.Unlock()
			runs++
			if runs == 1 {
				return runtime.FailRequest(errors.New("first run refused"))
			}
			return nil
		})
		wf := runtime.NewWorkflow()
		once := runtime.AddStep(wf, wfOnce{Key: "r-1"})
		runtime.AddStep(wf, wfStock{Order: "r-1"}, runtime.After(once))
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true})
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowFailed, info.State)

		pushed, err := runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "pay", info.Steps[0].JobID)
		require.NoError(t, err)
		require.Equal(t, []string{info.Steps[0].JobID}, pushed)
		var log lockedBuffer
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		require.Equal(t, 2, runs)
		require.Zero(t, rec.runs("stock:r-1"), "nothing after the step runs")
		lines := strings.Count(log.String(), "a workflow step retried from the failed store succeeded")
		require.Equal(t, 1, lines, log.String())
		require.Contains(t, log.String(), "queue:workflow-retry")
		require.Contains(t, log.String(), "workflow="+id)
	})
}
