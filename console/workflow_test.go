package console_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// wfPrice records a result; wfRefuse fails for good at once.
type wfPrice struct{ Order string }

func (wfPrice) JobName() string                { return "test.Price" }
func (wfPrice) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "pay"} }
func (j wfPrice) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfRefuse struct{ Order string }

func (wfRefuse) JobName() string                { return "test.Refuse" }
func (wfRefuse) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "pay", Tries: 1} }
func (j wfRefuse) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// A workflow whose step fails: queue:workflow shows it and its steps,
// queue:workflow-cancel refuses it as ended, queue:workflow-retry runs it
// again; a running one is cancelled; an unknown ID is named.
func TestWorkflowCommands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		runtime.RegisterResult(b.router, "test.Price", func(ctx context.Context, j wfPrice) (string, error) { return "12.50 EUR", nil })
		runtime.Register(b.router, "test.Refuse", func(ctx context.Context, j wfRefuse) error { return errors.New("card declined") })
		ctx := runtime.WithDispatcher(b.ctx, b.engine)
		id := "order 17 <b>"
		wf := runtime.NewWorkflow().WithID(id)
		price := runtime.AddStep(wf, wfPrice{Order: "17"})
		refuse := runtime.AddStep(wf, wfRefuse{Order: "17"})
		runtime.AddStep(wf, greet{Name: "17"}, runtime.After(price, refuse), runtime.StepOnQueue("mail"))
		_, err := wf.Dispatch(ctx)
		require.NoError(t, err)
		w, err := runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{Queues: []string{"pay", "mail"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))

		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		out := b.ok(t, "queue:workflow", id)
		require.Contains(t, out, "Workflow    order 17 <b>\n")
		require.Regexp(t, `State       failed: .*card declined`, out)
		require.Contains(t, out, "Ended       20")
		require.Contains(t, out, "Deadline    none\n")
		require.Contains(t, out, "Steps       3 steps: 1 succeeded, 1 failed, 1 dropped\n")
		_, steps, ok := strings.Cut(out, "\n\n")
		require.True(t, ok, out)
		r := rows(steps)
		require.Equal(t, []string{"STEP", "JOB", "QUEUE", "JOB", "ID", "STATE", "NEEDS", "WAITS", "RESULT"}, r[0])
		require.Equal(t, []string{"0", "test.Price", "pay", info.Steps[0].JobID, "succeeded", "-", "-", "10", "B"}, r[1])
		require.Equal(t, []string{"1", "test.Refuse", "pay", info.Steps[1].JobID, "failed", "-", "-", "-"}, r[2])
		require.Equal(t, []string{"2", "test.Greet", "mail", info.Steps[2].JobID, "dropped", "-", "0,1", "-"}, r[3])

		code, _, stderr := b.run(t, "queue:workflow-cancel", id)
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:workflow-cancel: the workflow has ended: workflow order 17 <b> is failed; nothing changed", oneLine(t, stderr))

		out = b.ok(t, "queue:workflow-retry", id)
		require.Equal(t, "Retried workflow order 17 <b>: 3 steps: 1 waiting, 1 released, 1 succeeded.\n", out)
		require.Equal(t, int64(1), b.sizes(t, "pay").Ready, "the failed step runs again")

		// A running workflow, cancelled.
		run := runtime.NewWorkflow().WithID("run-1")
		runtime.AddStep(run, greet{Name: "later"})
		_, err = run.Dispatch(ctx)
		require.NoError(t, err)
		require.Contains(t, b.ok(t, "queue:workflow", "run-1"), "State       running\n")
		require.Equal(t, "Cancelled workflow run-1.\n", b.ok(t, "queue:workflow-cancel", "run-1"))
		require.Contains(t, b.ok(t, "queue:workflow", "run-1"), "State       cancelled")

		for _, cmd := range []string{"queue:workflow", "queue:workflow-cancel", "queue:workflow-retry"} {
			code, _, stderr = b.run(t, cmd, "nope")
			require.Equal(t, 1, code, cmd)
			require.Equal(t, "app "+cmd+": no workflow with ID nope (unknown, or ended longer ago than EngineConfig.WorkflowRetention, 24h by default)", oneLine(t, stderr))
			code, _, stderr = b.run(t, cmd, "a,b")
			require.Equal(t, 2, code, cmd)
			oneLine(t, stderr)
		}
	})
}
