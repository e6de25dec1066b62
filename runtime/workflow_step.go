package runtime

import (
	"context"
	"errors"
	"fmt"
)

// What a step's handler is handed: the results of the steps it needs
// (StepInputs), and a way to add steps to its workflow (Spawn).

// ErrNotAStep is returned by Spawn, and fails a job that needs results,
// when the job does not run as a step of a workflow.
var ErrNotAStep = errors.New("jobgen: the job does not run as a step of a workflow")

// StepInputs are the results a step is handed from the steps it needs,
// one entry per Need it was added with, in order: a single result, or a
// list of them for a fan-in. Generated handlers get them decoded into a
// struct of typed fields; Input and InputList decode one entry.
type StepInputs struct {
	// Workflow is the ID of the step's workflow, Step its ID in it.
	Workflow, Step string
	// raw[i][k] is the k-th result of need i; nil for a step that failed
	// under ContinueWorkflow, or that recorded no result.
	raw   [][][]byte
	lists []bool
}

// Len returns the number of needs.
func (in *StepInputs) Len() int { return len(in.raw) }

// Missing reports whether the k-th step of need i (k is 0 for a single
// step) left no result: it failed, and the workflow continued without
// it. Its value in the decoded inputs is then the zero value.
func (in *StepInputs) Missing(i, k int) bool {
	return i < len(in.raw) && k < len(in.raw[i]) && in.raw[i][k] == nil
}

// Input decodes the result of need i, a single step's, as an R.
func Input[R any](in *StepInputs, i int) (R, error) {
	var v R
	if i >= len(in.raw) || len(in.raw[i]) != 1 || in.lists[i] {
		return v, fmt.Errorf("%w: step %s of workflow %s: input %d is not the result of one step (%d inputs)", ErrDecode, in.Step, in.Workflow, i, len(in.raw))
	}
	if in.raw[i][0] == nil {
		return v, nil
	}
	v, err := Decode[R](in.raw[i][0])
	if err != nil {
		return v, fmt.Errorf("%w: step %s of workflow %s: input %d: %v", ErrDecode, in.Step, in.Workflow, i, err)
	}
	return v, nil
}

// InputList decodes the results of need i, a list of steps', in order,
// as Rs.
func InputList[R any](in *StepInputs, i int) ([]R, error) {
	if i >= len(in.raw) || !in.lists[i] {
		return nil, fmt.Errorf("%w: step %s of workflow %s: input %d is not a list of results (%d inputs)", ErrDecode, in.Step, in.Workflow, i, len(in.raw))
	}
	out := make([]R, len(in.raw[i]))
	for k, b := range in.raw[i] {
		if b == nil {
			continue
		}
		v, err := Decode[R](b)
		if err != nil {
			return nil, fmt.Errorf("%w: step %s of workflow %s: input %d, result %d: %v", ErrDecode, in.Step, in.Workflow, i, k, err)
		}
		out[k] = v
	}
	return out, nil
}

// stepRun is what the context of a running step knows of it.
type stepRun struct {
	e        *Engine
	workflow string
	step     string
	attempt  int
	inputs   *StepInputs
	env      *Envelope
	spawned  int // steps spawned so far by this attempt
}

type stepKey struct{}

func stepFrom(ctx context.Context) *stepRun {
	s, _ := ctx.Value(stepKey{}).(*stepRun)
	return s
}

// CurrentStep returns the workflow ID and step ID of the step whose
// handler runs with ctx; ok is false outside a workflow's step.
func CurrentStep(ctx context.Context) (workflow, step string, ok bool) {
	s := stepFrom(ctx)
	if s == nil {
		return "", "", false
	}
	return s.workflow, s.step, true
}

// inputsFrom returns the inputs of the step running with ctx, read from
// its workflow first if it was released without them. Its errors are
// FailRequest's, but for an error reading them, which the attempt's
// retries cover.
func inputsFrom(ctx context.Context, name string) (*StepInputs, error) {
	s := stepFrom(ctx)
	if s == nil {
		return nil, FailRequest(fmt.Errorf("%w: job %s needs the results of other steps; dispatch it as a step of a workflow (runtime.NewWorkflow, its generated AddTo)", ErrNotAStep, name))
	}
	if s.inputs == nil {
		if err := s.readInputs(ctx); err != nil {
			return nil, err
		}
	}
	return s.inputs, nil
}

// RegisterStep routes jobs named name, steps that need other steps'
// results, to handle, handing it the results decoded by decode.
// Generated Register functions call it for job types annotated `needs=`.
// A job that runs outside a workflow, or whose inputs do not decode,
// fails at once (FailRequest); an error reading inputs from Redis, for a
// step released without them, fails the attempt, and is retried.
func RegisterStep[T, In any](r *Router, name string, handle func(ctx context.Context, job T, in In) error, decode func(*StepInputs) (In, error), opts ...RouteOption[T]) {
	Register(r, name, func(ctx context.Context, job T) error {
		in, err := stepIn(ctx, name, decode)
		if err != nil {
			return err
		}
		return handle(ctx, job, in)
	}, opts...)
}

// RegisterStepResult is RegisterStep for a step that returns a result,
// as RegisterResult is Register's.
func RegisterStepResult[T, In, R any](r *Router, name string, handle func(ctx context.Context, job T, in In) (R, error), decode func(*StepInputs) (In, error), opts ...RouteOption[T]) {
	RegisterResult(r, name, func(ctx context.Context, job T) (R, error) {
		in, err := stepIn(ctx, name, decode)
		if err != nil {
			var zero R
			return zero, err
		}
		return handle(ctx, job, in)
	}, opts...)
}

// stepIn returns the step's inputs, decoded: a failure to decode them
// fails the job for good (FailRequest), as inputsFrom's errors say.
func stepIn[In any](ctx context.Context, name string, decode func(*StepInputs) (In, error)) (In, error) {
	var zero In
	raw, err := inputsFrom(ctx, name)
	if err != nil {
		return zero, err
	}
	in, err := decode(raw)
	if err != nil {
		return zero, FailRequest(err)
	}
	return in, nil
}

// StepHandler is a job type that handles itself as a step, handed its
// inputs.
type StepHandler[In any] interface {
	Handle(ctx context.Context, in In) error
}

// HandleStepMethod adapts a job type with its own Handle(ctx, in) method
// into a handler for RegisterStep.
func HandleStepMethod[T StepHandler[In], In any](ctx context.Context, job T, in In) error {
	return job.Handle(ctx, in)
}

// StepResultHandler is a job type that handles itself as a step, handed
// its inputs, and returns a result.
type StepResultHandler[In, R any] interface {
	Handle(ctx context.Context, in In) (R, error)
}

// HandleStepResultMethod adapts a job type with its own Handle(ctx, in)
// (R, error) method into a handler for RegisterStepResult.
func HandleStepResultMethod[T StepResultHandler[In, R], In, R any](ctx context.Context, job T, in In) (R, error) {
	return job.Handle(ctx, in)
}
