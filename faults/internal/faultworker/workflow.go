package faultworker

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// The steps of the suite's workflows, written as jobgen writes job types
// annotated `needs=` (runtime/workflow_test.go has the same shape). Every
// step has a Seq, unique in its test, and a result, Value(Seq), but the
// split, whose dependents it spawns. A step that needs results checks
// they are the values of the steps it names, in order: one that sees
// anything else writes a W line to the ledger and fails.
//
// A diamond is WfRoot; WfMid steps needing it; a WfJoin needing the
// mids; WfTail steps needing the join; a WfEnd needing the join and the
// tails. A fan-out is a WfSplit that spawns WfChild steps and a WfGather
// needing them all.

// WorkflowQueue is the queue of every workflow step (their `queue=`),
// the queue of the suite's tests.
const WorkflowQueue = "faults"

// Wire names of the workflow steps.
const (
	WfRootName   = "faults.WfRoot"
	WfMidName    = "faults.WfMid"
	WfJoinName   = "faults.WfJoin"
	WfTailName   = "faults.WfTail"
	WfEndName    = "faults.WfEnd"
	WfSplitName  = "faults.WfSplit"
	WfChildName  = "faults.WfChild"
	WfGatherName = "faults.WfGather"
)

// Value is the result of the step with sequence number seq.
func Value(seq int) int { return seq*31 + 7 }

// WfRoot is the first step of a diamond.
type WfRoot struct{ Seq, Millis int }

// JobName implements runtime.Job.
func (WfRoot) JobName() string { return WfRootName }

// JobOptions implements runtime.Job.
func (WfRoot) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: WorkflowQueue} }

// EncodeJob implements runtime.Job.
func (j WfRoot) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// WfMid needs the result of the root step From.
type WfMid struct{ Seq, From, Millis int }

// JobName implements runtime.Job.
func (WfMid) JobName() string { return WfMidName }

// JobOptions implements runtime.Job.
func (WfMid) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: WorkflowQueue, Needs: []string{WfRootName}}
}

// EncodeJob implements runtime.Job.
func (j WfMid) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// AddTo adds the job to wf as a step needing root's result.
func (j WfMid) AddTo(wf *runtime.Workflow, root runtime.Step[WfRoot], opts ...runtime.StepOption) runtime.Step[WfMid] {
	return runtime.AddStep(wf, j, append([]runtime.StepOption{runtime.Needs(root.Need())}, opts...)...)
}

func decodeWfMidInputs(in *runtime.StepInputs) (int, error) { return runtime.Input[int](in, 0) }

// WfJoin needs the results of the N mids from From on, in order.
type WfJoin struct{ Seq, From, N, Millis int }

// JobName implements runtime.Job.
func (WfJoin) JobName() string { return WfJoinName }

// JobOptions implements runtime.Job.
func (WfJoin) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: WorkflowQueue, Needs: []string{"[]" + WfMidName}}
}

// EncodeJob implements runtime.Job.
func (j WfJoin) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// AddTo adds the job to wf as a step needing the mids' results.
func (j WfJoin) AddTo(wf *runtime.Workflow, mids runtime.Steps[WfMid], opts ...runtime.StepOption) runtime.Step[WfJoin] {
	return runtime.AddStep(wf, j, append([]runtime.StepOption{runtime.Needs(mids.Need())}, opts...)...)
}

func decodeWfJoinInputs(in *runtime.StepInputs) ([]int, error) { return runtime.InputList[int](in, 0) }

// WfTail needs the result of the join From.
type WfTail struct{ Seq, From, Millis int }

// JobName implements runtime.Job.
func (WfTail) JobName() string { return WfTailName }

// JobOptions implements runtime.Job.
func (WfTail) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: WorkflowQueue, Needs: []string{WfJoinName}}
}

// EncodeJob implements runtime.Job.
func (j WfTail) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// AddTo adds the job to wf as a step needing join's result.
func (j WfTail) AddTo(wf *runtime.Workflow, join runtime.Step[WfJoin], opts ...runtime.StepOption) runtime.Step[WfTail] {
	return runtime.AddStep(wf, j, append([]runtime.StepOption{runtime.Needs(join.Need())}, opts...)...)
}

func decodeWfTailInputs(in *runtime.StepInputs) (int, error) { return runtime.Input[int](in, 0) }

// WfEnd needs the result of the join Join and those of the N tails from
// From on.
type WfEnd struct{ Seq, Join, From, N, Millis int }

// JobName implements runtime.Job.
func (WfEnd) JobName() string { return WfEndName }

// JobOptions implements runtime.Job.
func (WfEnd) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: WorkflowQueue, Needs: []string{WfJoinName, "[]" + WfTailName}}
}

// EncodeJob implements runtime.Job.
func (j WfEnd) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// AddTo adds the job to wf as a step needing join's and the tails'
// results.
func (j WfEnd) AddTo(wf *runtime.Workflow, join runtime.Step[WfJoin], tails runtime.Steps[WfTail], opts ...runtime.StepOption) runtime.Step[WfEnd] {
	return runtime.AddStep(wf, j, append([]runtime.StepOption{runtime.Needs(join.Need(), tails.Need())}, opts...)...)
}

// WfEndInputs are the results WfEnd is handed.
type WfEndInputs struct {
	Join  int
	Tails []int
}

func decodeWfEndInputs(in *runtime.StepInputs) (v WfEndInputs, err error) {
	if v.Join, err = runtime.Input[int](in, 0); err != nil {
		return v, err
	}
	if v.Tails, err = runtime.InputList[int](in, 1); err != nil {
		return v, err
	}
	return v, nil
}

// WfSplit spawns N WfChild steps, Seq+1 to Seq+N, and a WfGather, Seq+N+1,
// needing them all.
type WfSplit struct{ Seq, N, Millis int }

// JobName implements runtime.Job.
func (WfSplit) JobName() string { return WfSplitName }

// JobOptions implements runtime.Job. A split of thousands takes a while
// to spawn them: it gets a minute and more tries than the rest.
func (WfSplit) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: WorkflowQueue, Timeout: time.Minute, Tries: 100}
}

// EncodeJob implements runtime.Job.
func (j WfSplit) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// WfChild is a spawned step of a fan-out.
type WfChild struct{ Seq, Millis int }

// JobName implements runtime.Job.
func (WfChild) JobName() string { return WfChildName }

// JobOptions implements runtime.Job.
func (WfChild) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: WorkflowQueue} }

// EncodeJob implements runtime.Job.
func (j WfChild) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// WfGather needs the results of the N children from From on, in order.
type WfGather struct{ Seq, From, N int }

// JobName implements runtime.Job.
func (WfGather) JobName() string { return WfGatherName }

// JobOptions implements runtime.Job.
func (WfGather) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: WorkflowQueue, Needs: []string{"[]" + WfChildName}}
}

// EncodeJob implements runtime.Job.
func (j WfGather) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// SpawnAfter spawns the job as a step of the running step's workflow,
// needing the children's results.
func (j WfGather) SpawnAfter(ctx context.Context, children runtime.Steps[WfChild], opts ...runtime.StepOption) (runtime.Step[WfGather], error) {
	return runtime.Spawn(ctx, j, append([]runtime.StepOption{runtime.Needs(children.Need())}, opts...)...)
}

func decodeWfGatherInputs(in *runtime.StepInputs) ([]int, error) {
	return runtime.InputList[int](in, 0)
}

// registerWorkflow routes the workflow steps, each run written to l.
func registerWorkflow(r *runtime.Router, l *Ledger) {
	runtime.RegisterResult(r, WfRootName, func(ctx context.Context, j WfRoot) (int, error) {
		return stepRun(ctx, l, j.Seq, j.Millis, nil)
	})
	runtime.RegisterStepResult(r, WfMidName, func(ctx context.Context, j WfMid, in int) (int, error) {
		return stepRun(ctx, l, j.Seq, j.Millis, func() string { return expect([]int{in}, j.From, 1) })
	}, decodeWfMidInputs)
	runtime.RegisterStepResult(r, WfJoinName, func(ctx context.Context, j WfJoin, in []int) (int, error) {
		return stepRun(ctx, l, j.Seq, j.Millis, func() string { return expect(in, j.From, j.N) })
	}, decodeWfJoinInputs)
	runtime.RegisterStepResult(r, WfTailName, func(ctx context.Context, j WfTail, in int) (int, error) {
		return stepRun(ctx, l, j.Seq, j.Millis, func() string { return expect([]int{in}, j.From, 1) })
	}, decodeWfTailInputs)
	runtime.RegisterStepResult(r, WfEndName, func(ctx context.Context, j WfEnd, in WfEndInputs) (int, error) {
		return stepRun(ctx, l, j.Seq, j.Millis, func() string {
			if bad := expect([]int{in.Join}, j.Join, 1); bad != "" {
				return bad
			}
			return expect(in.Tails, j.From, j.N)
		})
	}, decodeWfEndInputs)
	runtime.Register(r, WfSplitName, func(ctx context.Context, j WfSplit) error {
		_, err := stepRun(ctx, l, j.Seq, j.Millis, func() string {
			kids := make([]WfChild, j.N)
			for i := range kids {
				kids[i] = WfChild{Seq: j.Seq + 1 + i, Millis: j.Millis}
			}
			steps, err := runtime.SpawnMany(ctx, kids)
			if err == nil {
				_, err = WfGather{Seq: j.Seq + j.N + 1, From: j.Seq + 1, N: j.N}.SpawnAfter(ctx, steps)
			}
			if err != nil {
				return "spawn: " + err.Error()
			}
			return ""
		})
		return err
	})
	runtime.RegisterResult(r, WfChildName, func(ctx context.Context, j WfChild) (int, error) {
		return stepRun(ctx, l, j.Seq, j.Millis, nil)
	})
	runtime.RegisterStepResult(r, WfGatherName, func(ctx context.Context, j WfGather, in []int) (int, error) {
		return stepRun(ctx, l, j.Seq, 0, func() string { return expect(in, j.From, j.N) })
	}, decodeWfGatherInputs)
}

// stepRun is one run of a step: an S line, a sleep of millis, the check
// (nil for none; it returns "" when the inputs are right), then an F
// line and the step's value, or a W line and a failure.
func stepRun(ctx context.Context, l *Ledger, seq, millis int, check func() string) (int, error) {
	info, _ := runtime.JobInfoFrom(ctx)
	l.Start(info.ID, seq, info.Attempt)
	if millis > 0 {
		t := time.NewTimer(time.Duration(millis) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, context.Cause(ctx)
		}
	}
	if check != nil {
		if bad := check(); bad != "" {
			l.Mismatch(info.ID, seq, bad)
			return 0, runtime.FailRequest(fmt.Errorf("faults: step %d: %s", seq, bad))
		}
	}
	l.Finish(info.ID, seq, info.Attempt)
	return Value(seq), nil
}

// expect says how got differs from the values of the n steps from from
// on, in order: "" if it does not.
func expect(got []int, from, n int) string {
	if len(got) != n {
		return fmt.Sprintf("%d inputs, want %d", len(got), n)
	}
	for i, v := range got {
		if v != Value(from+i) {
			return fmt.Sprintf("input %d is %d, want %d (the value of step %d)", i, v, Value(from+i), from+i)
		}
	}
	return ""
}
