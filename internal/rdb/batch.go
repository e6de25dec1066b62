package rdb

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
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
