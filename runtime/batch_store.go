package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobgen/jobgen/internal/keyspace"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

func batchKeysFor(e *Engine, id string) (keyspace.BatchKeys, error) {
	if id == "" || strings.ContainsAny(id, "{}") {
		return keyspace.BatchKeys{}, fmt.Errorf("%w: batch ID %q", ErrInvalid, id)
	}
	return e.keys.Batch(id), nil
}

// Find returns the state of batch id; ok is false if there is none.
func (s *BatchStore) Find(ctx context.Context, id string) (status BatchStatus, ok bool, err error) {
	bk, err := batchKeysFor(s.e, id)
	if err != nil {
		return BatchStatus{}, false, err
	}
	// One slot: a transaction works on a cluster too.
	state, failed, err := s.e.store.BatchRecord(ctx, bk)
	if err != nil {
		return BatchStatus{}, false, fmt.Errorf("find batch %s: %w", id, err)
	}
	status, ok = batchStatus(id, state, failed)
	return status, ok, nil
}

// batchStatus reads a batch's state hash h and the IDs of its failed
// jobs; ok is false if h is empty (no such batch).
func batchStatus(id string, h map[string]string, failed []string) (status BatchStatus, ok bool) {
	if len(h) == 0 {
		return BatchStatus{}, false
	}
	num := func(k string) int { n, _ := strconv.Atoi(h[k]); return n }
	at := func(k string) int64 { n, _ := strconv.ParseInt(h[k], 10, 64); return n }
	slices.Sort(failed)
	return BatchStatus{
		ID: id, Name: h["name"],
		Total: num("total"), Pending: num("pending"), Failed: num("failed"), FailedIDs: failed,
		AllowFailures: h["allow_failures"] == "1",
		CreatedAt:     msTime(at("created_at")),
		CancelledAt:   msTime(at("cancelled_at")),
		FinishedAt:    msTime(at("finished_at")),
	}, true
}

// List returns the batches dispatched within StateRetention that still
// exist, newest first: up to limit of them, after skipping offset, read
// in one pipeline (each batch's counts and failed IDs without the
// transaction Find reads them in). IDs of batches whose records have
// expired are dropped from the list as it meets them, so a page may hold
// fewer than limit.
func (s *BatchStore) List(ctx context.Context, offset, limit int) ([]BatchStatus, error) {
	if offset < 0 || limit < 1 {
		return nil, fmt.Errorf("%w: list batches: offset %d, limit %d", ErrInvalid, offset, limit)
	}
	k := s.e.keys.Batches()
	ids, err := s.e.store.BatchIDs(ctx, k, int64(offset), int64(offset+limit-1))
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	bks := make([]keyspace.BatchKeys, len(ids))
	for i, id := range ids {
		bks[i] = s.e.keys.Batch(id)
	}
	states, failed, err := s.e.store.BatchRecords(ctx, bks)
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	out := make([]BatchStatus, 0, len(ids))
	var gone []string
	for i, id := range ids {
		if st, ok := batchStatus(id, states[i], failed[i]); ok {
			out = append(out, st)
		} else {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if err := s.e.store.DropBatchIDs(ctx, k, gone); err != nil {
			return nil, fmt.Errorf("list batches: %w", err)
		}
	}
	return out, nil
}

// Count returns how many batches the list holds: those dispatched within
// StateRetention, counting those whose records expired since List last
// met them.
func (s *BatchStore) Count(ctx context.Context) (int64, error) {
	n, err := s.e.store.CountBatchIDs(ctx, s.e.keys.Batches())
	if err != nil {
		return 0, fmt.Errorf("count batches: %w", err)
	}
	return n, nil
}

// Cancel cancels batch id: its jobs that have not run are skipped. Jobs
// running now finish.
func (s *BatchStore) Cancel(ctx context.Context, id string) error {
	bk, err := batchKeysFor(s.e, id)
	if err != nil {
		return err
	}
	ok, err := s.e.store.CancelBatch(ctx, bk, s.e.cfg.StateRetention.Milliseconds())
	switch {
	case err != nil:
		return fmt.Errorf("cancel batch %s: %w", id, err)
	case !ok:
		return fmt.Errorf("cancel batch %s: %w", id, ErrNoBatch)
	}
	return nil
}

// Add adds jobs to batch id, which may be running: a job of the batch
// may add more. They go to the batch's queue if they name none, and
// count toward its totals before they are pushed. Adding to a batch
// whose jobs have all succeeded returns ErrBatchFinished.
func (s *BatchStore) Add(ctx context.Context, id string, jobs ...Job) error {
	bk, err := batchKeysFor(s.e, id)
	if err != nil {
		return err
	}
	opts, err := s.e.store.BatchFields(ctx, bk, "queue", "connection")
	if err != nil {
		return fmt.Errorf("add to batch %s: %w", id, err)
	}
	q, c := opts[0], opts[1]
	out, n, err := batchJobs(id, BatchOptions{Queue: q, Connection: c}, jobs, s.e.seal)
	if err != nil {
		return fmt.Errorf("add to batch %s: %w", id, err)
	}
	count := func(n int) error {
		return s.e.store.AddToBatch(ctx, bk, n, s.e.cfg.StateRetention.Milliseconds(), newToken())
	}
	switch err := count(n); {
	case err == nil:
	case jobrdb.HasErrorPrefix(err, "NO_BATCH"):
		return fmt.Errorf("add to batch %s: %w", id, ErrNoBatch)
	case jobrdb.HasErrorPrefix(err, "BATCH_FINISHED"):
		return fmt.Errorf("add to batch %s: %w", id, ErrBatchFinished)
	default:
		return fmt.Errorf("add to batch %s: %w", id, err)
	}
	if err := s.e.PushMany(ctx, out); err != nil {
		_ = count(-n)
		return fmt.Errorf("add to batch %s: %w", id, err)
	}
	return nil
}

// Retry pushes the failed jobs of batch id back onto their queues from
// the failed store, and returns how many went. If the batch was
// cancelled by a failure, it is resumed; one cancelled by Cancel stays
// cancelled. Jobs no longer in the failed store are skipped.
func (s *BatchStore) Retry(ctx context.Context, id string) (int, error) {
	bk, err := batchKeysFor(s.e, id)
	if err != nil {
		return 0, err
	}
	failed, err := s.e.store.BatchFailedJobs(ctx, bk)
	if err != nil {
		return 0, fmt.Errorf("retry batch %s: %w", id, err)
	}
	byQueue := map[string][]string{}
	for jobID, q := range failed {
		byQueue[q] = append(byQueue[q], jobID)
	}
	by, err := s.e.store.BatchCancelledBy(ctx, bk)
	if err != nil {
		return 0, fmt.Errorf("retry batch %s: %w", id, err)
	}
	if by == "failure" {
		if err := s.e.store.ClearBatchCancel(ctx, bk); err != nil {
			return 0, fmt.Errorf("retry batch %s: %w", id, err)
		}
	}
	queues := make([]string, 0, len(byQueue))
	for q := range byQueue {
		queues = append(queues, q)
	}
	slices.Sort(queues)
	total := 0
	for _, q := range queues {
		ids := byQueue[q]
		slices.Sort(ids)
		done, err := s.e.inspector().Failed().Retry(ctx, q, ids...)
		total += len(done)
		if err != nil {
			return total, fmt.Errorf("retry batch %s: %w", id, err)
		}
	}
	return total, nil
}
