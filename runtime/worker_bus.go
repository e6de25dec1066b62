package runtime

import "context"

// The worker's hooks for chains, batches and unique jobs. process and
// its helpers in worker_job.go call these at fixed points; everything
// else about those features lives in chain.go, batch.go and unique.go.

// prepare runs just before a job's handler. It says whether to skip the
// handler and settle the job as a success: a chain link that finished
// before (its worker died before acking it), or a job of a cancelled
// batch. Otherwise it releases an until-processing unique lock. A Redis
// error here is logged and the job runs.
func (w *Worker) prepare(ctx context.Context, res Reservation, env *Envelope) (skip bool) {
	done, err := w.chainDone(ctx, res, env)
	if err != nil {
		w.log.Warn("could not tell whether a chain link ran before; running it", "job", env.Name, "id", env.ID, "err", err)
	}
	if done {
		w.log.Info("chain link finished before its worker died; acking it without running it again", "job", env.Name, "id", env.ID)
		return true
	}
	if w.batchCancelled(ctx, env) {
		return true
	}
	w.releaseUnique(ctx, env, true)
	return false
}

// completed runs after a job succeeded, before its ack: it counts the job
// in its batch, running the batch's callbacks if it was the last, and
// pushes the next link of its chain. Both are idempotent, so if the
// worker dies before the ack and the job runs again, nothing is counted
// or pushed twice. On error the job is not acked, and all of it is done
// again when the job runs again.
func (w *Worker) completed(ctx context.Context, env *Envelope) error {
	if err := w.batchSucceeded(ctx, env); err != nil {
		return err
	}
	return w.dispatchNext(ctx, env)
}

// failing runs before a job moves to the failed store: it counts the
// failure in the job's batch (running its callbacks) and runs the catch
// callback of its chain, whose remaining links are dropped.
func (w *Worker) failing(ctx context.Context, env *Envelope, cause error) {
	w.batchFailed(ctx, env, cause)
	w.runCatch(ctx, env, cause)
}

// ended runs once a job has ended for good, succeeded or failed: it
// releases its unique lock.
func (w *Worker) ended(ctx context.Context, env *Envelope) {
	w.releaseUnique(ctx, env, false)
}
