package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A step on a connection whose engine shares the workflow's Redis and
// key prefix runs, and its end reaches its workflow; one whose engine
// keeps its keys under another prefix is refused at dispatch, naming
// the step, the connection and the prefixes, and nothing is created:
// its end could never reach the workflow. A step spawned onto such a
// connection is refused the same way.
func TestWorkflowStepOnConnectionNeedsTheWorkflowsPrefix(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		prefix := b.engine.Config().Prefix
		same, err := runtime.NewEngine(context.Background(), b.engine.Client(), runtime.EngineConfig{Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { _ = same.Close() })
		other, err := runtime.NewEngine(context.Background(), b.engine.Client(), runtime.EngineConfig{Prefix: prefix + "-other"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = other.Close() })
		runtime.SetConnection("wf-same-"+prefix, same)
		runtime.SetConnection("wf-other-"+prefix, other)

		// Not b.ctx: WithDispatcher sends every connection's dispatches to
		// its engine.
		ctx := runtime.HandlerContext(context.Background(), b.engine, b.router)
		var rec wfRec
		rec.register(b.router)
		wf := runtime.NewWorkflow()
		charge := runtime.AddStep(wf, wfCharge{Order: "c1"}, runtime.StepOnConnection("wf-same-"+prefix))
		runtime.AddStep(wf, wfStock{Order: "c1"}, runtime.After(charge), runtime.StepOnConnection("wf-same-"+prefix))
		id, err := wf.Dispatch(ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true})
		require.Equal(t, 1, rec.runs("charge:c1"))
		require.Equal(t, 1, rec.runs("stock:c1"))
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)

		wf = runtime.NewWorkflow()
		runtime.AddStep(wf, wfCharge{Order: "c2"})
		runtime.AddStep(wf, wfStock{Order: "c2"}, runtime.StepOnConnection("wf-other-"+prefix))
		_, err = wf.Dispatch(ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "step 1 (wf.Stock)")
		require.ErrorContains(t, err, `"wf-other-`+prefix+`"`)
		require.ErrorContains(t, err, "prefix")
		_, err = runtime.NewInspector(b.engine).Workflow(b.ctx, wf.ID())
		require.ErrorIs(t, err, runtime.ErrNoWorkflow)

		var mu sync.Mutex
		spawned := map[string]error{}
		runtime.Register(b.router, "wf.SpawnOn", func(ctx context.Context, j wfSpawnOn) error {
			_, err := runtime.Spawn(ctx, wfStock{Order: "s-" + j.Conn}, runtime.StepOnConnection(j.Conn))
			mu.Lock()
			spawned[j.Conn] = err
			mu.Unlock()
			return nil
		})
		wf = runtime.NewWorkflow()
		runtime.AddStep(wf, wfSpawnOn{Conn: "wf-same-" + prefix})
		runtime.AddStep(wf, wfSpawnOn{Conn: "wf-other-" + prefix})
		id, err = wf.Dispatch(ctx)
		require.NoError(t, err)
		// A worker whose context sends each connection to its own engine,
		// as a worker's does outside the tests (not b.ctx).
		w := b.worker(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true})
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		require.NoError(t, w.Run(wctx))
		require.NoError(t, spawned["wf-same-"+prefix])
		require.Equal(t, 1, rec.runs("stock:s-wf-same-"+prefix))
		err = spawned["wf-other-"+prefix]
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "step 1.0 (wf.Stock)")
		require.ErrorContains(t, err, `"wf-other-`+prefix+`"`)
		require.Zero(t, rec.runs("stock:s-wf-other-"+prefix))
		info, err = runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
		require.Len(t, info.Steps, 3, "the refused step was not added")
	})
}

// wfSpawnOn spawns a step onto connection Conn.
type wfSpawnOn struct{ Conn string }

func (wfSpawnOn) JobName() string                { return "wf.SpawnOn" }
func (wfSpawnOn) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "default"} }
func (j wfSpawnOn) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }
