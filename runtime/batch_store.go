package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
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
	var state *redis.MapStringStringCmd
	var failed *redis.StringSliceCmd
	// One slot: a transaction works on a cluster too.
	_, err = s.e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		state = p.HGetAll(ctx, bk.State)
		failed = p.HKeys(ctx, bk.Failed)
		return nil
	})
	if err != nil {
		return BatchStatus{}, false, fmt.Errorf("find batch %s: %w", id, err)
	}
	status, ok = batchStatus(id, state.Val(), failed.Val())
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
	ids, err := s.e.rdb.ZRevRange(ctx, k, int64(offset), int64(offset+limit-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	states := make([]*redis.MapStringStringCmd, len(ids))
	failed := make([]*redis.StringSliceCmd, len(ids))
	if _, err := s.e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			bk := s.e.keys.Batch(id)
			states[i], failed[i] = p.HGetAll(ctx, bk.State), p.HKeys(ctx, bk.Failed)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	out := make([]BatchStatus, 0, len(ids))
	var gone []any
	for i, id := range ids {
		if st, ok := batchStatus(id, states[i].Val(), failed[i].Val()); ok {
			out = append(out, st)
		} else {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if err := s.e.rdb.ZRem(ctx, k, gone...).Err(); err != nil {
			return nil, fmt.Errorf("list batches: %w", err)
		}
	}
	return out, nil
}

// Count returns how many batches the list holds: those dispatched within
// StateRetention, counting those whose records expired since List last
// met them.
func (s *BatchStore) Count(ctx context.Context) (int64, error) {
	n, err := s.e.rdb.ZCard(ctx, s.e.keys.Batches()).Result()
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
	n, err := call{Script: scriptBatchCancel, Keys: bk.All(), Args: []any{s.e.cfg.StateRetention.Milliseconds()}}.Run(ctx, s.e.rdb).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("cancel batch %s: %w", id, err)
	case n < 0:
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
	opts, err := s.e.rdb.HMGet(ctx, bk.State, "queue", "connection").Result()
	if err != nil {
		return fmt.Errorf("add to batch %s: %w", id, err)
	}
	q, _ := opts[0].(string)
	c, _ := opts[1].(string)
	out, n, err := batchJobs(id, BatchOptions{Queue: q, Connection: c}, jobs, s.e.seal)
	if err != nil {
		return fmt.Errorf("add to batch %s: %w", id, err)
	}
	count := func(n int) error {
		return call{Script: scriptBatchAdd, Keys: bk.All(), Args: []any{"add", n, s.e.cfg.StateRetention.Milliseconds(), newToken()}}.Run(ctx, s.e.rdb).Err()
	}
	switch err := count(n); {
	case err == nil:
	case redis.HasErrorPrefix(err, "NO_BATCH"):
		return fmt.Errorf("add to batch %s: %w", id, ErrNoBatch)
	case redis.HasErrorPrefix(err, "BATCH_FINISHED"):
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
	failed, err := s.e.rdb.HGetAll(ctx, bk.Failed).Result()
	if err != nil {
		return 0, fmt.Errorf("retry batch %s: %w", id, err)
	}
	byQueue := map[string][]string{}
	for jobID, q := range failed {
		byQueue[q] = append(byQueue[q], jobID)
	}
	by, err := s.e.rdb.HGet(ctx, bk.State, "cancelled_by").Result()
	if err != nil && err != redis.Nil {
		return 0, fmt.Errorf("retry batch %s: %w", id, err)
	}
	if by == "failure" {
		if err := s.e.rdb.HDel(ctx, bk.State, "cancelled_at", "cancelled_by").Err(); err != nil {
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
