package rdb

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
)

// The reads and small writes of operators' tools (runtime's Inspector):
// flags, pages of a queue's lists and sets, one job wherever it is.

// Field is a value read from Redis, and whether it was there.
type Field struct {
	Value string
	Found bool
}

// Score is a member's score in a sorted set, and whether it was there.
type Score struct {
	Value float64
	Found bool
}

func field(c *redis.StringCmd) Field {
	return Field{Value: c.Val(), Found: c.Err() == nil}
}

func score(c *redis.FloatCmd) Score {
	return Score{Value: c.Val(), Found: c.Err() == nil}
}

// SetFlag sets key to "1" with no TTL, or deletes it when on is false.
func (s *Store) SetFlag(ctx context.Context, key string, on bool) error {
	if !on {
		return s.c.Del(ctx, key).Err()
	}
	return s.c.Set(ctx, key, "1", 0).Err()
}

// Exists reports whether key exists.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	n, err := s.c.Exists(ctx, key).Result()
	return n == 1, err
}

// CountExisting returns how many of keys exist, in one command: in a
// cluster they must share a slot.
func (s *Store) CountExisting(ctx context.Context, keys []string) (int64, error) {
	return s.c.Exists(ctx, keys...).Result()
}

// Members returns the members of the set key.
func (s *Store) Members(ctx context.Context, key string) ([]string, error) {
	return s.c.SMembers(ctx, key).Result()
}

// Advance sets key to the Redis time in unix ms, or to one more than the
// integer it holds if that is not earlier, so that its value only grows
// while it exists. A value that is not a number counts as 0.
func (s *Store) Advance(ctx context.Context, key string) error {
	var last *redis.StringCmd
	var now *redis.TimeCmd
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		last = p.Get(ctx, key)
		now = p.Time(ctx)
		return nil
	})
	if err := last.Err(); err != nil && err != redis.Nil {
		return err
	}
	if err := now.Err(); err != nil {
		return err
	}
	prev, _ := last.Int64()
	return s.c.Set(ctx, key, max(now.Val().UnixMilli(), prev+1), 0).Err()
}

// ListPage returns the length of the list key and its elements from
// start to stop, in one round trip.
func (s *Store) ListPage(ctx context.Context, key string, start, stop int64) (int64, []string, error) {
	var n *redis.IntCmd
	var r *redis.StringSliceCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.LLen(ctx, key)
		r = p.LRange(ctx, key, start, stop)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return n.Val(), r.Val(), nil
}

// SetPage returns the size of the sorted set key and its members from
// start to stop, lowest score first, with their scores, in one round
// trip.
func (s *Store) SetPage(ctx context.Context, key string, start, stop int64) (int64, []string, []float64, error) {
	var n *redis.IntCmd
	var r *redis.ZSliceCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.ZCard(ctx, key)
		r = p.ZRangeWithScores(ctx, key, start, stop)
		return nil
	})
	if err != nil {
		return 0, nil, nil, err
	}
	var ids []string
	var scores []float64
	for _, z := range r.Val() {
		ids = append(ids, z.Member.(string))
		scores = append(scores, z.Score)
	}
	return n.Val(), ids, scores, nil
}

// HashFields reads the fields ids of each hash of hashes in one
// pipeline (not MULTI: past maxmemory Redis refuses to EXEC, even
// reads): out[h][i] is field ids[i] of hashes[h].
func (s *Store) HashFields(ctx context.Context, ids []string, hashes ...string) ([][]Field, error) {
	cmds := make([]*redis.SliceCmd, len(hashes))
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for h, k := range hashes {
			cmds[h] = p.HMGet(ctx, k, ids...)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([][]Field, len(hashes))
	for h, c := range cmds {
		out[h] = fields(c.Val(), len(ids))
	}
	return out, nil
}

// fields reads an HMGET reply of n fields.
func fields(vals []any, n int) []Field {
	out := make([]Field, n)
	for i := range out {
		if i < len(vals) {
			out[i].Value, out[i].Found = vals[i].(string)
		}
	}
	return out
}

// QueuedJob is what a queue holds of one job, from each of its keys.
type QueuedJob struct {
	Payload, State, Errors, Progress Field // of a job not failed
	Delayed, Reserved, Failed        Score
	FailedPayload, FailedErrors      Field // of a failed job
}

// FindJob reads what the queue of qk holds of job id, in one round trip.
func (s *Store) FindJob(ctx context.Context, qk keyspace.QueueKeys, id string) (QueuedJob, error) {
	var payload, failedPayload, state, errs, failedErrs, progress *redis.StringCmd
	var delayed, reserved, failed *redis.FloatCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		payload = p.HGet(ctx, qk.Payloads, id)
		state = p.HGet(ctx, qk.State, id)
		delayed = p.ZScore(ctx, qk.Delayed, id)
		reserved = p.ZScore(ctx, qk.Reserved, id)
		failed = p.ZScore(ctx, qk.Failed, id)
		failedPayload = p.HGet(ctx, qk.FailedPayloads, id)
		errs = p.HGet(ctx, qk.Errors, id)
		failedErrs = p.HGet(ctx, qk.FailedErrors, id)
		progress = p.HGet(ctx, qk.Progress, id)
		return nil
	})
	if err != nil && err != redis.Nil {
		return QueuedJob{}, err
	}
	return QueuedJob{
		Payload: field(payload), State: field(state), Errors: field(errs), Progress: field(progress),
		Delayed: score(delayed), Reserved: score(reserved), Failed: score(failed),
		FailedPayload: field(failedPayload), FailedErrors: field(failedErrs),
	}, nil
}

// First returns the first element of the list key; found is false if it
// is empty.
func (s *Store) First(ctx context.Context, key string) (v string, found bool, err error) {
	v, err = s.c.LIndex(ctx, key, 0).Result()
	if err == redis.Nil {
		return "", false, nil
	}
	return v, err == nil, err
}

// HashField returns field of the hash key; found is false if it has
// none.
func (s *Store) HashField(ctx context.Context, key, field string) (v string, found bool, err error) {
	v, err = s.c.HGet(ctx, key, field).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return v, err == nil, err
}

// Hash returns every field of the hash key, none if it does not exist.
func (s *Store) Hash(ctx context.Context, key string) (map[string]string, error) {
	m, err := s.c.HGetAll(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return m, err
}

// Hashes returns every field of each hash of keys, in one pipeline; a
// hash that does not exist is empty.
func (s *Store) Hashes(ctx context.Context, keys []string) ([]map[string]string, error) {
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGetAll(ctx, k)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, err
	}
	out := make([]map[string]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// Count returns the size of the sorted set key.
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	return s.c.ZCard(ctx, key).Result()
}

// NewestPage returns the members of the sorted set key from start to
// stop (-1: to the end), highest score first, with their scores.
func (s *Store) NewestPage(ctx context.Context, key string, start, stop int64) ([]string, []float64, error) {
	zs, err := s.c.ZRevRangeWithScores(ctx, key, start, stop).Result()
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(zs))
	scores := make([]float64, len(zs))
	for i, z := range zs {
		ids[i], scores[i] = z.Member.(string), z.Score
	}
	return ids, scores, nil
}

// ScoreOf returns member's score in the sorted set key; found is false
// if it is not there.
func (s *Store) ScoreOf(ctx context.Context, key, member string) (v float64, found bool, err error) {
	v, err = s.c.ZScore(ctx, key, member).Result()
	if err == redis.Nil {
		return 0, false, nil
	}
	return v, err == nil, err
}

// UpTo returns the members of the sorted set key whose score is at most
// max (a ZRANGEBYSCORE bound), lowest first, skipping offset of them
// and returning at most count.
func (s *Store) UpTo(ctx context.Context, key, max string, offset, count int64) ([]string, error) {
	return s.c.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "-inf", Max: max, Offset: offset, Count: count}).Result()
}

// Delete deletes keys.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	return s.c.Del(ctx, keys...).Err()
}
