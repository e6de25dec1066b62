package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// FailedBackend keeps failed jobs outside Redis: set as
// EngineConfig.FailedStore, it is where the failed store lives, and
// FailedStore's methods (so queue:failed, queue:retry, queue:forget,
// queue:flush, queue:prune-failed and the dashboard) read and change it.
// Package failedsql is one, on a PostgreSQL table in the outbox's
// database (docs/failures.md).
//
// A job that fails goes into Redis's failed store first, in the same
// script that takes it from its queue, and its hooks run from there; the
// engine then moves it: Save, then a delete in Redis of the entries
// still failed at the time saved. A crash in between leaves the entry in
// Redis, and the next move saves it again, which changes nothing. A job
// moves once its hooks have run; moves run after each fail, at each of
// FailedStore's calls, and in each worker's sweep (every RetryAfter).
//
// Retry locks the rows, pushes their jobs through the engine, each under
// a mark of its own, deletes the rows and commits: the outbox relay's
// protocol (docs/outbox.md, "Exactly once"), so that a job is neither
// lost nor pushed twice whatever crashes.
//
// Its methods take plain values; a queue is a queue's name, or one
// partition's.
type FailedBackend interface {
	// String names the store, for errors and logs.
	String() string
	// Save stores jobs. A job the store holds already under the same
	// queue, ID and FailedAt is left as it is.
	Save(ctx context.Context, jobs []FailedJob) error
	// Count returns how many failed jobs queue holds.
	Count(ctx context.Context, queue string) (int64, error)
	// List returns a page of queue's failed jobs, newest first.
	List(ctx context.Context, queue string, offset, limit int) ([]FailedJob, error)
	// Get returns queue's failed job id (its newest failure, should it
	// have several); ok is false if there is none.
	Get(ctx context.Context, queue, id string) (job FailedJob, ok bool, err error)
	// UpTo returns the IDs of queue's failed jobs that failed at or
	// before upTo, oldest first, skipping offset of them, at most limit.
	UpTo(ctx context.Context, queue string, upTo time.Time, offset, limit int) ([]string, error)
	// Forget deletes queue's failed jobs ids and returns how many went.
	Forget(ctx context.Context, queue string, ids []string) (int64, error)
	// Flush deletes every failed job of queue.
	Flush(ctx context.Context, queue string) error
	// Prune deletes queue's failed jobs that failed more than age ago,
	// by the store's clock, and returns how many went.
	Prune(ctx context.Context, queue string, age time.Duration) (int64, error)
	// Retry locks the failed jobs ids of queue, skipping those another
	// Retry holds, hands them to r.Push, deletes those it reports pushed,
	// and commits; it returns their IDs. A transaction left idle for
	// r.Idle must end by itself (it held its locks past the pushes'
	// deadline), so that another Retry can take the jobs.
	Retry(ctx context.Context, queue string, ids []string, r FailedRetry) ([]string, error)
}

// FailedRetry is how a FailedBackend's Retry pushes the jobs it locked.
type FailedRetry struct {
	// Idle is how long the transaction may stay idle before the store
	// ends it.
	Idle time.Duration
	// Push pushes jobs back onto their queue and reports, per job, that
	// it is in Redis and its row may go. An error may pass (Redis
	// unreachable): the rows it did not report stay.
	Push func(ctx context.Context, jobs []FailedJob) (pushed []bool, err error)
}

// failedRetryLease bounds the time from a Retry's lock of its rows to
// its pushes: Redis refuses a push later than that, by its clock (the
// outbox relay's Lease, docs/outbox.md).
const failedRetryLease = 30 * time.Second

// backend is the engine's FailedBackend for this view of the failed
// store, nil for Redis's.
func (s *FailedStore) backend() FailedBackend {
	if s.redis {
		return nil
	}
	return s.e.cfg.FailedStore
}

// redisFailed is the failed store in Redis, whatever EngineConfig.FailedStore
// says: a failed job's hooks (hooks.go) read it there, where it stays
// until they ran.
func (e *Engine) redisFailed() *FailedStore { return &FailedStore{e: e, redis: true} }

// moveFailed moves the failed jobs of queue (a queue or a partition)
// from Redis to the engine's FailedBackend, if it has one, except those
// whose hooks have yet to run.
func (e *Engine) moveFailed(ctx context.Context, queue string) error {
	b := e.cfg.FailedStore
	if b == nil {
		return nil
	}
	k, err := e.redisFailed().keysFor(queue)
	if err != nil {
		return err
	}
	hooked, err := e.store.HookIDs(ctx, queue)
	if err != nil {
		return fmt.Errorf("move failed jobs of %q to %s: %w", queue, b, err)
	}
	var offset int64
	for {
		ids, at, err := e.store.NewestPage(ctx, k[0], offset, offset+999)
		if err != nil {
			return fmt.Errorf("move failed jobs of %q to %s: %w", queue, b, err)
		}
		if len(ids) == 0 {
			return nil
		}
		var take []string
		var takeAt []float64
		for i, id := range ids {
			if hooked[id] {
				offset++ // moved once its hooks ran
				continue
			}
			take, takeAt = append(take, id), append(takeAt, at[i])
		}
		if len(take) == 0 {
			continue
		}
		jobs, err := e.redisFailed().load(ctx, queue, k, take, takeAt)
		if err != nil {
			return err
		}
		if err := b.Save(ctx, jobs); err != nil {
			return fmt.Errorf("move failed jobs of %q to %s: %w", queue, b, err)
		}
		moved := make([]jobrdb.Moved, len(jobs))
		for i, j := range jobs {
			moved[i] = jobrdb.Moved{ID: j.ID, At: j.FailedAt.UnixMilli()}
		}
		n, err := e.store.DropMoved(ctx, queue, moved)
		if err != nil {
			return fmt.Errorf("move failed jobs of %q to %s: %w", queue, b, err)
		}
		// Entries failed again meanwhile stay, for the next move.
		offset += int64(len(moved)) - n
	}
}

// moveFailedLogged is moveFailed after a fail: an error is logged, and
// the jobs stay in Redis for the next move.
func (e *Engine) moveFailedLogged(ctx context.Context, queue string) {
	if err := e.moveFailed(ctx, queue); err != nil && ctx.Err() == nil {
		e.cfg.Logger.Warn("jobgen: moving failed jobs out of Redis failed; they stay there until the next move", "queue", queue, "err", err)
	}
}

// retryBackend pushes the failed jobs ids of queue, kept in b, back onto
// queue, each under a mark of its own in the queue's retried set
// (keyspace's Retried: apart from the relay's marks, which a relay's
// Reconcile lets expire once no outbox row has their ID), and deletes
// their rows once pushed (FailedBackend.Retry).
func (s *FailedStore) retryBackend(ctx context.Context, b FailedBackend, queue string, ids []string) ([]string, error) {
	if err := s.e.remember(ctx, queue); err != nil {
		return nil, err
	}
	// The deadline counts from before the rows are locked.
	t0, err := s.e.store.Time(ctx)
	if err != nil {
		return nil, fmt.Errorf("retry failed jobs of %q: read the Redis clock: %w", queue, err)
	}
	deadline := t0.Add(failedRetryLease).UnixMilli()
	var marks []string
	push := func(ctx context.Context, jobs []FailedJob) ([]bool, error) {
		res := RelayResult{Rows: make([]RelayOutcome, len(jobs))}
		pushes := make([]relayPush, len(jobs))
		for i, j := range jobs {
			pushes[i] = relayPush{row: &res.Rows[i], name: j.Name, mark: failedMark(j), id: j.ID, queue: queue, payload: j.Payload}
		}
		err := s.e.markedSend(ctx, &res, pushes, deadline, s.e.keys.Retried)
		done := make([]bool, len(jobs))
		for i, out := range res.Rows {
			done[i] = out.Done
			if out.Done {
				marks = append(marks, pushes[i].mark)
			} else if out.Parked != "" {
				err = errors.Join(err, fmt.Errorf("retry failed job %s of %q: %s", jobs[i].ID, queue, out.Parked))
			}
		}
		return done, err
	}
	done, err := b.Retry(ctx, queue, ids, FailedRetry{Idle: 2 * failedRetryLease, Push: push})
	if len(done) > 0 {
		// The rows are gone: the marks may expire, past the deadline of
		// any Retry that locked the rows before.
		if _, rerr := s.e.store.ReleaseMarksIn(context.WithoutCancel(ctx), s.e.keys.Retried, failedMarkGrace, map[string][]string{queue: marks}); rerr != nil {
			s.e.cfg.Logger.Warn("jobgen: releasing the marks of retried failed jobs failed; they stay, pending, while Redis keeps them", "queue", queue, "err", rerr)
		}
	}
	if err != nil {
		return done, fmt.Errorf("retry failed jobs of %q from %s: %w", queue, b, err)
	}
	return done, nil
}

// failedMarkGrace is how long a released mark of a retried failed job
// stays, in ms: past the deadline of any Retry that locked its row, with
// a minute for the clocks of a cluster's masters to differ.
var failedMarkGrace = 2*failedRetryLease.Milliseconds() + time.Minute.Milliseconds()

// failedMark is the mark a retried failed job is pushed under: one per
// failure, so that a job failed again after a retry is retried again.
func failedMark(j FailedJob) string {
	return "failed:" + j.ID + ":" + strconv.FormatInt(j.FailedAt.UnixMilli(), 10)
}

// retryAllBackend is RetryAll on b.
func (s *FailedStore) retryAllBackend(ctx context.Context, b FailedBackend, queue string) (int, error) {
	newest, err := b.List(ctx, queue, 0, 1)
	if err != nil || len(newest) == 0 {
		return 0, err
	}
	cutoff := newest[0].FailedAt
	total, skipped := 0, 0
	for {
		ids, err := b.UpTo(ctx, queue, cutoff, skipped, 1000)
		if err != nil {
			return total, fmt.Errorf("retry failed jobs of %q: %w", queue, err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		done, err := s.retryBackend(ctx, b, queue, ids)
		total += len(done)
		if err != nil {
			return total, err
		}
		skipped += len(ids) - len(done)
	}
}

// validateFailedStore checks EngineConfig.FailedStore against the
// bounds of Redis's store.
func (c *EngineConfig) validateFailedStore() error {
	if c.FailedStore == nil {
		return nil
	}
	switch {
	case c.FailedMaxCount > 0:
		return fmt.Errorf("%w: EngineConfig.FailedMaxCount (%d) must be 0 with EngineConfig.FailedStore (%s), which keeps every failed job: bound it with queue:prune-failed", ErrInvalid, c.FailedMaxCount, c.FailedStore)
	case c.FailedMaxAge > 0:
		return fmt.Errorf("%w: EngineConfig.FailedMaxAge (%v) must be 0 with EngineConfig.FailedStore (%s), which keeps every failed job: bound it with queue:prune-failed", ErrInvalid, c.FailedMaxAge, c.FailedStore)
	}
	return nil
}

// moved returns the engine's FailedBackend, if it has one and this view
// is not Redis's alone, once the failed jobs of queue in Redis have moved
// there.
func (s *FailedStore) moved(ctx context.Context, queue string) (FailedBackend, error) {
	b := s.backend()
	if b == nil {
		return nil, nil
	}
	if err := validateQueueOrPartition(queue); err != nil {
		return b, err
	}
	return b, s.e.moveFailed(ctx, queue)
}

// findMovedFailed is FindJob's answer for a job Redis does not hold: the
// engine's FailedBackend's, if it has one.
func (e *Engine) findMovedFailed(ctx context.Context, queue, id string) (QueuedJob, bool, error) {
	b := e.cfg.FailedStore
	if b == nil {
		return QueuedJob{}, false, nil
	}
	f, ok, err := b.Get(ctx, queue, id)
	if err != nil || !ok {
		return QueuedJob{}, false, err
	}
	return QueuedJob{Queue: queue, ID: id, State: StateFailed, Payload: f.Payload, Errors: f.Errors, Attempts: f.Attempts}, true, nil
}

// movedFailedCounts replaces the failed counts of sizes (by queue, or
// partition) with the engine's FailedBackend's, if it has one, after
// moving the failed jobs there.
func (e *Engine) movedFailedCounts(ctx context.Context, queues []string, failed func(i int, n int64)) error {
	if e.cfg.FailedStore == nil {
		return nil
	}
	for i, q := range queues {
		n, err := e.inspector().Failed().Count(ctx, q)
		if err != nil {
			return err
		}
		failed(i, n)
	}
	return nil
}
