package runtime

import (
	"context"
	"fmt"
)

// checkStepConnections refuses, with ErrInvalid, a step of steps pushed
// through a connection whose engine keeps its keys under another prefix
// than e's. The worker that runs a step records its end in its workflow
// through its own engine's keys: under another prefix it would not find
// the workflow, which would then wait on the step for ever.
func (e *Engine) checkStepConnections(ctx context.Context, id string, steps []*stepSpec) error {
	for _, s := range steps {
		conn := s.conn
		if conn == "" {
			conn = asPending(s.job).JobOptions().Connection
		}
		if conn == "" {
			continue
		}
		where := func(err error) error {
			return fmt.Errorf("workflow %s: step %s (%s): %w", id, s.id, s.job.JobName(), err)
		}
		te, err := e.stepEngine(ctx, conn)
		if err != nil {
			return where(err)
		}
		if te.cfg.Prefix != e.cfg.Prefix {
			return where(fmt.Errorf("%w: the engine of connection %q keeps its keys under prefix %q, and the workflow's under %q: a step records its end in its workflow, so its connection must share the workflow's Redis and key prefix", ErrInvalid, conn, te.cfg.Prefix, e.cfg.Prefix))
		}
	}
	return nil
}
