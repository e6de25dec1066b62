package rdb

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/runtime/lua"
)

// Batches: each batch's keys (keyspace.BatchKeys), which the batch
// scripts write, and the list of batches (keyspace.Batches), a ZSET of
// IDs by creation time.

// DeleteBatch deletes the keys of a batch.
func (s *Store) DeleteBatch(ctx context.Context, bk keyspace.BatchKeys) error {
	return s.c.Del(ctx, bk.All()...).Err()
}

// IndexBatch adds batch id, created at unix ms created, to the list of
// batches list, and drops the entries created before unix ms oldest,
// in one pipeline.
func (s *Store) IndexBatch(ctx context.Context, list, id string, created, oldest int64) error {
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, list, redis.Z{Score: float64(created), Member: id})
		p.ZRemRangeByScore(ctx, list, "-inf", "("+strconv.FormatInt(oldest, 10))
		return nil
	})
	return err
}

// BatchRecord reads a batch's state hash and the IDs of its failed jobs,
// in one transaction (the keys share a slot). The state is empty if
// there is no such batch.
func (s *Store) BatchRecord(ctx context.Context, bk keyspace.BatchKeys) (state map[string]string, failed []string, err error) {
	var st *redis.MapStringStringCmd
	var f *redis.StringSliceCmd
	_, err = s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		st = p.HGetAll(ctx, bk.State)
		f = p.HKeys(ctx, bk.Failed)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return st.Val(), f.Val(), nil
}

// BatchRecords is BatchRecord for several batches, in one pipeline
// rather than a transaction each.
func (s *Store) BatchRecords(ctx context.Context, bks []keyspace.BatchKeys) (states []map[string]string, failed [][]string, err error) {
	st := make([]*redis.MapStringStringCmd, len(bks))
	f := make([]*redis.StringSliceCmd, len(bks))
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, bk := range bks {
			st[i], f[i] = p.HGetAll(ctx, bk.State), p.HKeys(ctx, bk.Failed)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	states, failed = make([]map[string]string, len(bks)), make([][]string, len(bks))
	for i := range bks {
		states[i], failed[i] = st[i].Val(), f[i].Val()
	}
	return states, failed, nil
}

// BatchIDs returns the IDs of the list of batches list, newest first,
// from index start to stop.
func (s *Store) BatchIDs(ctx context.Context, list string, start, stop int64) ([]string, error) {
	return s.c.ZRevRange(ctx, list, start, stop).Result()
}

// DropBatchIDs removes ids from the list of batches list.
func (s *Store) DropBatchIDs(ctx context.Context, list string, ids []string) error {
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	return s.c.ZRem(ctx, list, members...).Err()
}

// CountBatchIDs returns the length of the list of batches list.
func (s *Store) CountBatchIDs(ctx context.Context, list string) (int64, error) {
	return s.c.ZCard(ctx, list).Result()
}

// BatchFields reads fields of a batch's state hash; a field it does not
// hold reads "".
func (s *Store) BatchFields(ctx context.Context, bk keyspace.BatchKeys, fields ...string) ([]string, error) {
	v, err := s.c.HMGet(ctx, bk.State, fields...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out, nil
}

// BatchFailedJobs reads the failed jobs of a batch: job ID -> queue.
func (s *Store) BatchFailedJobs(ctx context.Context, bk keyspace.BatchKeys) (map[string]string, error) {
	return s.c.HGetAll(ctx, bk.Failed).Result()
}

// BatchCancelledBy reads what cancelled a batch ("failure" or another
// cause), "" if it is not cancelled.
func (s *Store) BatchCancelledBy(ctx context.Context, bk keyspace.BatchKeys) (string, error) {
	by, err := s.c.HGet(ctx, bk.State, "cancelled_by").Result()
	if err != nil && err != redis.Nil {
		return "", err
	}
	return by, nil
}

// ClearBatchCancel removes a batch's cancellation.
func (s *Store) ClearBatchCancel(ctx context.Context, bk keyspace.BatchKeys) error {
	return s.c.HDel(ctx, bk.State, "cancelled_at", "cancelled_by").Err()
}

// BatchCancelled reports whether a batch is cancelled.
func (s *Store) BatchCancelled(ctx context.Context, bk keyspace.BatchKeys) (bool, error) {
	return s.c.HExists(ctx, bk.State, "cancelled_at").Result()
}

var (
	scriptBatchAdd    = lua.Get("batch_add")
	scriptBatchDone   = lua.Get("batch_done")
	scriptBatchFail   = lua.Get("batch_fail")
	scriptBatchRan    = lua.Get("batch_ran")
	scriptBatchCancel = lua.Get("batch_cancel")
)

// CreateBatch creates a batch of n jobs, whose state lives retention ms
// after it finishes, with the fields of its state hash fields (name,
// value, ...).
func (s *Store) CreateBatch(ctx context.Context, bk keyspace.BatchKeys, n int, retention int64, token string, fields []any) error {
	args := append([]any{"create", n, retention, token}, fields...)
	return Call{Script: scriptBatchAdd, Keys: bk.All(), Args: args}.Run(ctx, s.c).Err()
}

// AddToBatch counts n more jobs in a batch. It fails with an error reply
// NO_BATCH if there is no such batch, and FINISHED if its jobs have all
// succeeded.
func (s *Store) AddToBatch(ctx context.Context, bk keyspace.BatchKeys, n int, retention int64, token string) error {
	return Call{Script: scriptBatchAdd, Keys: bk.All(), Args: []any{"add", n, retention, token}}.Run(ctx, s.c).Err()
}

// CancelBatch cancels a batch; ok is false if there is no such batch.
func (s *Store) CancelBatch(ctx context.Context, bk keyspace.BatchKeys, retention int64) (ok bool, err error) {
	n, err := Call{Script: scriptBatchCancel, Keys: bk.All(), Args: []any{retention}}.Run(ctx, s.c).Int64()
	return n >= 0, err
}

// BatchDue is what counting a job in its batch found: Gone if the batch
// is gone (expired, or never created), and which of its callbacks fell
// due for the job to run.
type BatchDue struct {
	Gone                 bool
	Then, Catch, Finally bool
}

func batchDue(v []int64, err error) (BatchDue, error) {
	if err != nil || len(v) != 4 {
		return BatchDue{}, err
	}
	return BatchDue{Gone: v[0] < 0, Then: v[1] == 1, Catch: v[2] == 1, Finally: v[3] == 1}, nil
}

// BatchDone counts job id as succeeded in its batch, once per ID.
func (s *Store) BatchDone(ctx context.Context, bk keyspace.BatchKeys, id string, retention int64) (BatchDue, error) {
	return batchDue(Call{Script: scriptBatchDone, Keys: bk.All(), Args: []any{id, retention}}.Run(ctx, s.c).Int64Slice())
}

// BatchFail counts job id of queue as failed for good in its batch, with
// the dropped links of its chain, once per ID.
func (s *Store) BatchFail(ctx context.Context, bk keyspace.BatchKeys, id, queue string, dropped int, retention int64) (BatchDue, error) {
	return batchDue(Call{Script: scriptBatchFail, Keys: bk.All(), Args: []any{id, queue, dropped, retention}}.Run(ctx, s.c).Int64Slice())
}

// BatchRan marks the batch's callbacks of kind ("then", "catch",
// "finally") as run by job id. finally is true if marking catch claimed
// finally for the job: every job has run.
func (s *Store) BatchRan(ctx context.Context, bk keyspace.BatchKeys, kind, id string, retention int64) (finally bool, err error) {
	n, err := Call{Script: scriptBatchRan, Keys: bk.All(), Args: []any{kind, id, retention}}.Run(ctx, s.c).Int64()
	return n == 1, err
}
