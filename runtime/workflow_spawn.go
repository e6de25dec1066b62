package runtime

import (
	"context"
	"fmt"
)

// Spawn adds job as a step of the workflow of the step whose handler
// runs with ctx (dynamic fan-out). The new step waits for the running
// step to succeed, and for the parents opts give (Needs, After; steps of
// the same workflow); it is released, exactly once, when they have. A
// step spawned by an attempt that then fails is dropped: the next
// attempt spawns again. Outside a workflow's step it returns ErrNotAStep.
func Spawn[J Job](ctx context.Context, job J, opts ...StepOption) (Step[J], error) {
	steps, err := SpawnMany(ctx, []J{job}, opts...)
	if err != nil {
		return Step[J]{}, err
	}
	return steps[0], nil
}

// SpawnMany adds each of jobs as a step, as Spawn does, in as few calls
// as it can (1,000 steps a call), and returns their handles in order.
func SpawnMany[J Job](ctx context.Context, jobs []J, opts ...StepOption) (Steps[J], error) {
	s := stepFrom(ctx)
	if s == nil {
		return nil, fmt.Errorf("%w: spawn %d steps", ErrNotAStep, len(jobs))
	}
	specs := make([]*stepSpec, len(jobs))
	out := make(Steps[J], len(jobs))
	for i, j := range jobs {
		sp := &stepSpec{id: fmt.Sprintf("%s.%d", s.step, s.spawned+i), job: j}
		for _, o := range opts {
			o(sp)
		}
		specs[i] = sp
		out[i] = Step[J]{id: sp.id}
	}
	if err := s.e.spawn(ctx, s, specs); err != nil {
		return nil, err
	}
	s.spawned += len(jobs)
	return out, nil
}
