package runtime

import (
	"context"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/keyspace"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// The worker's side of batches: skipping the jobs of a cancelled batch,
// counting jobs as they end, and running the callbacks that fall due.

// batches is the worker's step for batches (worker_steps.go).
type batches struct{ busEnv }

func (s batches) before(ctx context.Context, _ Reservation, env *Envelope) bool {
	return s.cancelled(ctx, env)
}
func (batches) ended(context.Context, *Envelope) {}
func (batches) hasFailWork(env *Envelope) bool   { return env.BatchID != "" }

// cancelled reports whether env belongs to a cancelled batch. A
// Redis error is logged and reported as not cancelled: the job runs.
func (s batches) cancelled(ctx context.Context, env *Envelope) bool {
	if env.BatchID == "" {
		return false
	}
	bk, err := batchKeysFor(s.e, env.BatchID)
	if err != nil {
		return false
	}
	cancelled, err := s.e.store.BatchCancelled(ctx, bk)
	if err != nil {
		s.log.Warn("could not tell whether a job's batch is cancelled; running it", "job", env.Name, "id", env.ID, "batch", env.BatchID, "err", err)
		return false
	}
	return cancelled
}

// succeeded counts env as succeeded in its batch and runs the
// callbacks that fall due. Counting is idempotent per job ID, so a job
// that runs again after its worker died counts once. An error leaves the
// job unacked, to be counted when it runs again.
func (s batches) succeeded(ctx context.Context, _ Reservation, env *Envelope, _ *Finish) error {
	if env.BatchID == "" {
		return nil
	}
	bk, err := batchKeysFor(s.e, env.BatchID)
	if err != nil {
		return nil
	}
	due, err := s.e.store.BatchDone(ctx, bk, env.ID, s.e.cfg.StateRetention.Milliseconds())
	if err != nil {
		return fmt.Errorf("count job %s in batch %s: %w", env.ID, env.BatchID, err)
	}
	s.runCallbacks(ctx, env, bk, due, nil)
	return nil
}

// failed counts env as failed for good in its batch, with the links
// of its chain that are dropped with it, and runs the callbacks that
// fall due. A Redis error is logged; the job goes to the failed store
// all the same.
func (s batches) failed(ctx context.Context, env *Envelope, cause error) {
	if env.BatchID == "" {
		return
	}
	bk, err := batchKeysFor(s.e, env.BatchID)
	if err != nil {
		return
	}
	due, err := s.e.store.BatchFail(ctx, bk, env.ID, env.Queue, len(env.Chain), s.e.cfg.StateRetention.Milliseconds())
	if err != nil {
		s.log.Error("counting a failed job in its batch failed", "job", env.Name, "id", env.ID, "batch", env.BatchID, "err", err)
		return
	}
	s.runCallbacks(ctx, env, bk, due, cause)
}

// batchKinds are the batch callback kinds, in the order they run.
var batchKinds = [3]string{"then", "catch", "finally"}

// runCallbacks runs the callbacks the batch script claimed for env
// (then, catch and finally), then marks each kind done.
// Marking catch done claims finally for env if every job has run by then:
// finally waits for a catch that another job claimed, so it never runs
// before it.
func (s batches) runCallbacks(ctx context.Context, env *Envelope, bk keyspace.BatchKeys, d jobrdb.BatchDue, cause error) {
	if d.Gone {
		s.log.Warn("the job's batch is gone (expired, or never created); not counted", "job", env.Name, "id", env.ID, "batch", env.BatchID)
		return
	}
	due := [3]bool{d.Then, d.Catch, d.Finally}
	if due == [3]bool{} {
		return
	}
	status, _, err := s.e.inspector().Batches().Find(ctx, env.BatchID)
	if err != nil {
		s.log.Error("reading a batch for its callbacks failed; they run when the job runs again", "batch", env.BatchID, "err", err)
		return
	}
	encoded, err := s.e.store.BatchFields(ctx, bk, batchKinds[:]...)
	if err != nil {
		s.log.Error("reading a batch's callbacks failed; they run when the job runs again", "batch", env.BatchID, "err", err)
		return
	}
	for i, kind := range batchKinds {
		if !due[i] {
			continue
		}
		raw := encoded[i]
		var refs []CallbackRef
		if err := msgpack.Unmarshal([]byte(raw), &refs); err != nil {
			s.log.Error("batch callbacks do not decode", "batch", env.BatchID, "kind", kind, "err", err)
		}
		batch := status
		o := Outcome{JobID: env.ID, JobName: env.Name, Batch: &batch}
		if kind == "catch" {
			o.Err = cause
		}
		for _, ref := range refs {
			s.runCallback(ctx, env.Queue, "batch "+kind, ref, o)
		}
		finally, err := s.e.store.BatchRan(ctx, bk, kind, env.ID, s.e.cfg.StateRetention.Milliseconds())
		if err != nil {
			s.log.Error("marking batch callbacks as run failed; they may run again", "batch", env.BatchID, "kind", kind, "err", err)
			continue
		}
		if kind == "catch" && finally && !due[2] {
			// Every job ran while catch did: finally is this job's now,
			// with the batch as it is now.
			due[2] = true
			if now, _, err := s.e.inspector().Batches().Find(ctx, env.BatchID); err == nil {
				status = now
			}
		}
	}
}
