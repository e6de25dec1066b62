package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// The jobs of the test workflows, written as jobgen writes them for
// `needs=`: an order is charged and its stock reserved in parallel, then
// shipped with both results; a split fans out one email per line and
// fans in a summary.

type wfCharge struct {
	Order string
	Fail  bool
}

func (wfCharge) JobName() string                { return "wf.Charge" }
func (wfCharge) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "pay", Tries: 1} }
func (j wfCharge) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfStock struct{ Order string }

func (wfStock) JobName() string                { return "wf.Stock" }
func (wfStock) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "stock"} }
func (j wfStock) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfShip struct{ Order string }

func (wfShip) JobName() string { return "wf.Ship" }
func (wfShip) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Needs: []string{"wf.Charge", "wf.Stock"}}
}
func (j wfShip) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type wfShipInputs struct {
	Charge string
	Stock  int
}

func decodeWfShipInputs(in *runtime.StepInputs) (v wfShipInputs, err error) {
	if v.Charge, err = runtime.Input[string](in, 0); err != nil {
		return v, err
	}
	if v.Stock, err = runtime.Input[int](in, 1); err != nil {
		return v, err
	}
	return v, nil
}

func (j wfShip) AddTo(wf *runtime.Workflow, charge runtime.Step[wfCharge], stock runtime.Step[wfStock], opts ...runtime.StepOption) runtime.Step[wfShip] {
	return runtime.AddStep(wf, j, append([]runtime.StepOption{runtime.Needs(charge.Need(), stock.Need())}, opts...)...)
}

type wfSplit struct {
	Lines int
	Fail  int // fail this many attempts after spawning
}

func (wfSplit) JobName() string                { return "wf.Split" }
func (wfSplit) JobOptions() runtime.JobOptions { return runtime.JobOptions{Tries: 3} }
func (j wfSplit) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfEmail struct{ Line int }

func (wfEmail) JobName() string                { return "wf.Email" }
func (wfEmail) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "mail"} }
func (j wfEmail) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfSummary struct{}

func (wfSummary) JobName() string { return "wf.Summary" }
func (wfSummary) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Needs: []string{"[]wf.Email"}}
}
func (j wfSummary) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

func (j wfSummary) SpawnAfter(ctx context.Context, emails runtime.Steps[wfEmail]) (runtime.Step[wfSummary], error) {
	return runtime.Spawn(ctx, j, runtime.Needs(emails.Need()))
}

// wfRec records what the handlers saw.
type wfRec struct {
	mu       sync.Mutex
	ran      map[string]int // job name + key -> runs
	shipped  []string
	summary  [][]int
	splitRun int
}

func (r *wfRec) count(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ran == nil {
		r.ran = map[string]int{}
	}
	r.ran[k]++
}

func (r *wfRec) runs(k string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ran[k]
}

func (r *wfRec) register(router *runtime.Router) {
	runtime.RegisterResult(router, "wf.Charge", func(ctx context.Context, j wfCharge) (string, error) {
		r.count("charge:" + j.Order)
		if j.Fail {
			return "", runtime.FailRequest(errors.New("card declined"))
		}
		return "charged " + j.Order, nil
	})
	runtime.RegisterResult(router, "wf.Stock", func(ctx context.Context, j wfStock) (int, error) {
		r.count("stock:" + j.Order)
		return len(j.Order), nil
	})
	runtime.RegisterStep(router, "wf.Ship", func(ctx context.Context, j wfShip, in wfShipInputs) error {
		r.count("ship:" + j.Order)
		r.mu.Lock()
		r.shipped = append(r.shipped, fmt.Sprintf("%s|%s|%d", j.Order, in.Charge, in.Stock))
		r.mu.Unlock()
		return nil
	}, decodeWfShipInputs)
	runtime.Register(router, "wf.Split", func(ctx context.Context, j wfSplit) error {
		r.mu.Lock()
		r.splitRun++
		run := r.splitRun
		r.mu.Unlock()
		jobs := make([]wfEmail, j.Lines)
		for i := range jobs {
			jobs[i] = wfEmail{Line: i}
		}
		emails, err := runtime.SpawnMany(ctx, jobs)
		if err != nil {
			return err
		}
		if _, err := (wfSummary{}).SpawnAfter(ctx, emails); err != nil {
			return err
		}
		if run <= j.Fail {
			return errors.New("split failed after spawning")
		}
		return nil
	})
	runtime.RegisterResult(router, "wf.Email", func(ctx context.Context, j wfEmail) (int, error) {
		r.count(fmt.Sprint("email:", j.Line))
		return j.Line * j.Line, nil
	})
	runtime.RegisterStep(router, "wf.Summary", func(ctx context.Context, j wfSummary, in []int) error {
		r.count("summary")
		r.mu.Lock()
		r.summary = append(r.summary, in)
		r.mu.Unlock()
		return nil
	}, func(in *runtime.StepInputs) ([]int, error) { return runtime.InputList[int](in, 0) })
}

var wfQueues = []string{"default", "pay", "stock", "mail"}

// A diamond: charge and stock run, then ship runs once with both their
// results, typed; the workflow ends succeeded with its results kept.
func TestWorkflowDiamondHandsTypedResults(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		wf := runtime.NewWorkflow()
		charge := runtime.AddStep(wf, wfCharge{Order: "o-17"})
		stock := runtime.AddStep(wf, wfStock{Order: "o-17"})
		ship := wfShip{Order: "o-17"}.AddTo(wf, charge, stock)
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 4})

		require.Equal(t, []string{"o-17|charged o-17|4"}, rec.shipped)
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
		require.Len(t, info.Steps, 3)
		for _, s := range info.Steps {
			require.Equal(t, runtime.StepSucceeded, s.State, s.ID)
		}
		require.Equal(t, []string{charge.ID(), stock.ID()}, info.Steps[2].Needs)
		require.Equal(t, "wf.Ship", info.Steps[2].Name)
		require.NotZero(t, info.Steps[0].ResultSize)
		got, err := runtime.WorkflowResult[string](b.ctx, runtime.NewInspector(b.engine), id, charge.ID())
		require.NoError(t, err)
		require.Equal(t, "charged o-17", got)
		_ = ship
	})
}

// A step spawns 40 children and a fan-in; the fan-in runs once, after
// them all, with their results in order. A spawning attempt that fails
// leaves nothing behind: the next attempt's children run, once each.
func TestWorkflowFanOutFanIn(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		wf := runtime.NewWorkflow()
		runtime.AddStep(wf, wfSplit{Lines: 40, Fail: 1})
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 8, Backoff: []time.Duration{time.Millisecond}})

		want := make([]int, 40)
		for i := range want {
			want[i] = i * i
			require.Equal(t, 1, rec.runs(fmt.Sprint("email:", i)), "email %d ran once", i)
		}
		require.Equal(t, [][]int{want}, rec.summary)
		require.Equal(t, 2, rec.splitRun)
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
		require.Len(t, info.Steps, 42)
		require.Equal(t, "0.40", info.Steps[41].ID)
		require.Len(t, info.Steps[41].Needs, 40)
	})
}

// A step that fails for good fails its workflow: the steps waiting on it
// never run, and the catch runs once with the reason.
func TestWorkflowFailureRunsCatch(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		var c caught
		cb := c.callback("wf-failed")
		runtime.RegisterCallback(b.router, cb)
		wf := runtime.NewWorkflow().Catch(cb.With("o-9"))
		charge := runtime.AddStep(wf, wfCharge{Order: "o-9", Fail: true})
		stock := runtime.AddStep(wf, wfStock{Order: "o-9"})
		wfShip{Order: "o-9"}.AddTo(wf, charge, stock)
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 1})

		require.Empty(t, rec.shipped)
		require.Len(t, c.list(), 1)
		require.Contains(t, c.list()[0], "card declined")
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowFailed, info.State)
		require.Contains(t, info.Why, "card declined")
		require.Equal(t, runtime.StepFailed, info.Steps[0].State)
		require.Equal(t, runtime.StepDropped, info.Steps[2].State)

		// Retried from its failed steps: stock, which succeeded, does
		// not run again; charge (fixed) and ship do.
		stockRuns := rec.runs("stock:o-9")
		require.NoError(t, runtime.NewInspector(b.engine).RetryWorkflow(b.ctx, id))
		// The failed step's job carries Fail; a retry runs the same job,
		// so it fails again: the catch runs a second time.
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 1})
		require.Equal(t, stockRuns, rec.runs("stock:o-9"), "a step that succeeded does not run again")
		require.Equal(t, 2, rec.runs("charge:o-9"))
		require.Len(t, c.list(), 2)
	})
}

// Under ContinueWorkflow a failed step's dependents run, with the zero
// value for its result, and the workflow succeeds.
func TestWorkflowContinuesPastAFailure(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		wf := runtime.NewWorkflow().OnStepFailure(runtime.ContinueWorkflow)
		charge := runtime.AddStep(wf, wfCharge{Order: "o-3", Fail: true})
		stock := runtime.AddStep(wf, wfStock{Order: "o-3"})
		wfShip{Order: "o-3"}.AddTo(wf, charge, stock)
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 1})
		require.Equal(t, []string{"o-3||3"}, rec.shipped)
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
	})
}

// Cancelling a workflow drops its waiting steps and takes its queued
// ones out of their queues: nothing of it runs after.
func TestWorkflowCancel(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		wf := runtime.NewWorkflow()
		charge := runtime.AddStep(wf, wfCharge{Order: "o-5"})
		stock := runtime.AddStep(wf, wfStock{Order: "o-5"})
		wfShip{Order: "o-5"}.AddTo(wf, charge, stock)
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		in := runtime.NewInspector(b.engine)
		err = in.RetryWorkflow(b.ctx, id)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "it is running, not failed or cancelled")
		require.NoError(t, in.CancelWorkflow(b.ctx, id))
		err = in.CancelWorkflow(b.ctx, id)
		require.ErrorIs(t, err, runtime.ErrWorkflowEnded)
		require.ErrorContains(t, err, "is cancelled")
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 1})
		require.Zero(t, rec.runs("charge:o-5")+rec.runs("stock:o-5")+rec.runs("ship:o-5"))
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowCancelled, info.State)
		states := []runtime.StepState{}
		for _, s := range info.Steps {
			states = append(states, s.State)
		}
		require.Equal(t, []runtime.StepState{runtime.StepReleased, runtime.StepReleased, runtime.StepDropped}, states)
	})
}

// A job that needs results is refused outside its generated AddTo, and
// run outside a workflow it fails naming what it needs.
func TestWorkflowRefusesMissingNeeds(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		wf := runtime.NewWorkflow()
		runtime.AddStep(wf, wfShip{Order: "x"})
		_, err := wf.Dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "wf.Charge, wf.Stock")

		wf = runtime.NewWorkflow()
		a := runtime.AddStep(wf, wfStock{Order: "x"})
		runtime.AddStep(wf, wfShip{Order: "x"}, runtime.Needs(a.Need(), a.Need()))
		_, err = wf.Dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "need 1 is wf.Charge")

		_, err = runtime.NewWorkflow().Dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.True(t, slices.Contains([]string{"default"}, "default"))
	})
}

// A workflow past its deadline fails: its step still waiting out a
// delay is taken out of its queue, and its catch runs once.
func TestWorkflowDeadline(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		var c caught
		cb := c.callback("wf-late")
		runtime.RegisterCallback(b.router, cb)
		wf := runtime.NewWorkflow().Catch(cb.With("o-1")).Deadline(300 * time.Millisecond)
		stock := runtime.AddStep(wf, wfStock{Order: "o-1"})
		runtime.AddStep(wf, wfCharge{Order: "o-1"}, runtime.After(stock), runtime.StepDelay(time.Minute))
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		_, stop := b.start(t, runtime.WorkerConfig{Queues: wfQueues, Sleep: 20 * time.Millisecond})
		in := runtime.NewInspector(b.engine)
		require.Eventually(t, func() bool {
			info, err := in.Workflow(b.ctx, id)
			return err == nil && info.State == runtime.WorkflowFailed && len(c.list()) == 1
		}, 10*time.Second, 20*time.Millisecond)
		stop()
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "deadline", info.Why)
		require.Equal(t, runtime.StepSucceeded, info.Steps[0].State)
		require.Zero(t, rec.runs("charge:o-1"))
		s, err := in.Sizes(b.ctx, "pay")
		require.NoError(t, err)
		require.Zero(t, s.Delayed, "the delayed step left its queue")
		require.Len(t, c.list(), 1)
		require.Contains(t, c.list()[0], "deadline")
	})
}
