package rdb

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// FinishedRecords reads the fields ids of the hash info, the records of
// finished jobs, and with scores each one's score in the sorted set z
// (0 if it is not there), in one round trip.
func (s *Store) FinishedRecords(ctx context.Context, info, z string, ids []string, scores bool) ([]Field, []float64, error) {
	var raw *redis.SliceCmd
	cmds := make([]*redis.FloatCmd, len(ids))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		raw = p.HMGet(ctx, info, ids...)
		if scores {
			for k, id := range ids {
				cmds[k] = p.ZScore(ctx, z, id)
			}
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, nil, err
	}
	var at []float64
	if scores {
		at = make([]float64, len(ids))
		for k, c := range cmds {
			at[k] = c.Val()
		}
	}
	return fields(raw.Val(), len(ids)), at, nil
}

// CountFrom counts the members of the sorted set key scored min or
// more (ZCOUNT key min +inf).
func (s *Store) CountFrom(ctx context.Context, key string, min int64) (int64, error) {
	return s.c.ZCount(ctx, key, strconv.FormatInt(min, 10), "+inf").Result()
}
