package runtime

import (
	"context"
	"log/slog"
	"time"
)

// A jobStep takes part in running and settling a job for one feature of
// the bus: batches (batch_worker.go), chains (chain.go) and unique locks
// (unique.go). The worker holds one of each in its steps and calls them
// in order at four fixed points of a job's run (worker_job.go); each
// feature keeps its state in Redis and knows nothing of the worker but
// what busEnv gives it.
type jobStep interface {
	// before runs just before the handler. skip settles the job as a
	// success without running it. A Redis error is logged, and the job
	// runs.
	before(ctx context.Context, res Reservation, env *Envelope) (skip bool)
	// succeeded runs after the job succeeded, before its ack, with what
	// the ack will store (fin, nil for nothing). It must be idempotent:
	// on error the job is not acked, and runs again.
	succeeded(ctx context.Context, res Reservation, env *Envelope, fin *Finish) error
	// failed runs once the failed store has the job.
	failed(ctx context.Context, env *Envelope, cause error)
	// hasFailWork says whether failed or ended has work for env, which
	// the worker then records as due before the fail (hooks.go).
	hasFailWork(env *Envelope) bool
	// ended runs once the job has ended for good, succeeded or failed.
	ended(ctx context.Context, env *Envelope)
}

// busEnv is what a jobStep may use of its worker: the engine, the router
// for callbacks, the log, and the lease that bounds a callback's run.
type busEnv struct {
	e          *Engine
	r          *Router
	log        *slog.Logger
	retryAfter time.Duration
}

// newSteps returns the worker's steps, in the order they run.
func newSteps(b busEnv) []jobStep {
	return []jobStep{batches{b}, chains{b}, workflows{b}, uniques{b}}
}

// prepare runs the steps' before: it says whether to skip the handler
// and settle the job as a success (a chain link that finished before its
// worker died, a job of a cancelled batch).
func (w *Worker) prepare(ctx context.Context, res Reservation, env *Envelope) (skip bool) {
	for _, s := range w.steps {
		if s.before(ctx, res, env) {
			return true
		}
	}
	return false
}

// completed runs the steps' succeeded, after a job succeeded and before
// its ack: its batch counts it, and its chain's next link is pushed. On
// error the job is not acked, and all of it is done again when the job
// runs again.
func (w *Worker) completed(ctx context.Context, res Reservation, env *Envelope, fin *Finish) error {
	for _, s := range w.steps {
		if err := s.succeeded(ctx, res, env, fin); err != nil {
			return err
		}
	}
	return nil
}

// failing runs the steps' failed, once the failed store has the job: its
// batch counts the failure, and its chain's catch callback runs.
func (w *Worker) failing(ctx context.Context, env *Envelope, cause error) {
	for _, s := range w.steps {
		s.failed(ctx, env, cause)
	}
}

// ended runs the steps' ended, once a job has ended for good: its unique
// lock is released.
func (w *Worker) ended(ctx context.Context, env *Envelope) {
	for _, s := range w.steps {
		s.ended(ctx, env)
	}
}
