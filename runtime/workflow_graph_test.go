package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// WorkflowGraph reads what Workflow reads but the sizes of the results:
// which steps have one, and every step's state, parents and job.
func TestWorkflowGraphReadsNoSizes(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		wf := runtime.NewWorkflow()
		charge := runtime.AddStep(wf, wfCharge{Order: "o-18"})
		stock := runtime.AddStep(wf, wfStock{Order: "o-18"})
		wfShip{Order: "o-18"}.AddTo(wf, charge, stock)
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 4})

		ins := runtime.NewInspector(b.engine)
		full, err := ins.Workflow(b.ctx, id)
		require.NoError(t, err)
		graph, err := ins.WorkflowGraph(b.ctx, id)
		require.NoError(t, err)
		require.Len(t, graph.Steps, 3)
		for i, s := range graph.Steps {
			require.Zero(t, s.ResultSize, s.ID)
			require.Equal(t, full.Steps[i].ResultSize > 0, s.HasResult, s.ID)
			require.Equal(t, full.Steps[i].HasResult, s.HasResult, s.ID)
			s.ResultSize = full.Steps[i].ResultSize
			require.Equal(t, full.Steps[i], s)
		}
		require.True(t, graph.Steps[0].HasResult)
		require.False(t, graph.Steps[2].HasResult, "ship records no result")

		_, err = ins.WorkflowGraph(b.ctx, "nope")
		require.ErrorIs(t, err, runtime.ErrNoWorkflow)
	})
}

// A workflow whose every step is released, none waiting, is cancelled:
// the count of its open steps moves by zero (a Lua -0 that Redis would
// refuse as "not an integer").
func TestWorkflowCancelWithNoStepWaiting(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		wf := runtime.NewWorkflow()
		runtime.AddStep(wf, wfStock{Order: "o-19"})
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		ins := runtime.NewInspector(b.engine)
		require.NoError(t, ins.CancelWorkflow(b.ctx, id))
		info, err := ins.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowCancelled, info.State)
	})
}
