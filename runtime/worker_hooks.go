package runtime

import (
	"context"
	"errors"
	"time"
)

// The worker's side of a failed job's hooks (hooks.go): it marks the
// hooks it runs, for the heartbeat to renew their record, removes the
// record once they ran, and sweeps the records that a dead worker left.

// runningHooks marks ref's hooks as run by this worker until the
// returned func is called: the heartbeat renews their record meanwhile.
func (w *Worker) runningHooks(ref Ref) (done func()) {
	w.mu.Lock()
	w.hooking[ref] = true
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.hooking, ref)
		w.mu.Unlock()
	}
}

// hooksDone removes ref's entry: its hooks ran, or will not.
func (w *Worker) hooksDone(ctx context.Context, ref Ref) {
	if err := w.e.store.HooksDone(ctx, hookOf(ref)); err != nil {
		w.log.Warn("removing a failed job's hooks entry failed; a sweep may run its hooks again", "queue", ref.Queue, "id", ref.ID, "err", err)
	}
}

// sweeper runs sweepHooks every RetryAfter until ctx is done.
func (w *Worker) sweeper(ctx context.Context) {
	t := time.NewTicker(w.cfg.RetryAfter)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.sweepHooks(ctx)
		}
	}
}

// sweepHooks runs the hooks that workers of the worker's queues recorded
// as due more than RetryAfter ago and did not finish.
func (w *Worker) sweepHooks(ctx context.Context) {
	for _, q := range w.cfg.Queues {
		_, partitioned, _ := w.e.eachPartition(q, func(_ *Engine, p string) (int64, error) {
			w.sweepQueue(ctx, p)
			return 0, nil
		})
		if !partitioned {
			w.sweepQueue(ctx, q)
		}
	}
}

func (w *Worker) sweepQueue(ctx context.Context, queue string) {
	refs, err := w.e.claimHooks(ctx, queue, w.cfg.RetryAfter)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("looking for failed jobs' hooks left undone failed", "queue", queue, "err", err)
		}
		return
	}
	for _, ref := range refs {
		job, ok, err := w.e.redisFailed().Get(ctx, queue, ref.ID)
		if err != nil {
			w.log.Warn("reading a failed job for its hooks failed; trying again later", "queue", queue, "id", ref.ID, "err", err)
			continue
		}
		if !ok || job.token != ref.Token {
			w.hooksDone(ctx, ref) // that fail never went through, or the job left the store
			continue
		}
		env, err := DecodeEnvelope(queue, ref.ID, job.Payload)
		if err == nil {
			err = w.open(env)
		}
		if err != nil {
			w.log.Error("a failed job whose hooks were left undone does not decode; they do not run", "queue", queue, "id", ref.ID, "err", err)
			w.hooksDone(ctx, ref)
			continue
		}
		w.log.Info("running the hooks of a failed job whose worker did not finish them", "queue", queue, "job", env.Name, "id", ref.ID)
		done := w.runningHooks(ref)
		w.failed(ctx, env, errors.New(job.Error))
		done()
		w.hooksDone(ctx, ref)
	}
	// With EngineConfig.FailedStore, jobs whose hooks have run since
	// their fail move there now (failed_backend.go).
	w.e.moveFailedLogged(ctx, queue)
}
