package rdb

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The worker registry and per-minute counts (runtime/monitor.go): each
// worker's record under a lease, the sorted set of workers by lease
// deadline, and hashes of counts that expire.

// LiveMembers returns the members of the sorted set key whose score is
// now (unix ms) or later, and deletes those below it: one command when
// none is below.
func (s *Store) LiveMembers(ctx context.Context, key string, now int64) ([]string, error) {
	all, err := s.c.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all))
	for _, z := range all {
		if z.Score >= float64(now) {
			ids = append(ids, z.Member.(string))
		}
	}
	if len(ids) < len(all) {
		_ = s.c.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(now, 10)).Err()
	}
	return ids, nil
}

// Values reads the string keys: in one MGET, or on a cluster, where
// they may be in different slots, in one pipeline of one GET each.
func (s *Store) Values(ctx context.Context, keys []string) ([]Field, error) {
	if _, cluster := s.c.(*redis.ClusterClient); !cluster && len(keys) > 0 {
		vals, err := s.c.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, err
		}
		return fields(vals, len(keys)), nil
	}
	cmds := make([]*redis.StringCmd, len(keys))
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Get(ctx, k)
		}
		return nil
	}); err != nil && err != redis.Nil {
		return nil, err
	}
	out := make([]Field, len(cmds))
	for i, c := range cmds {
		out[i] = field(c)
	}
	return out, nil
}

// Incr adds N to the integer Field of the hash Key.
type Incr struct {
	Key, Field string
	N          int64
}

// MonitorWrite is one write of a worker's record and counts.
type MonitorWrite struct {
	// Registry is the sorted set of workers, Record the key of this
	// worker's record and ID its member of Registry.
	Registry, Record, ID string
	// Remove deletes the record and the member, rather than set them.
	Remove bool
	// Data is the record, kept for Lease; the member's score is Until
	// (unix ms).
	Data  []byte
	Lease time.Duration
	Until int64
	// Incrs are counts to add, and Expire the keys to expire, at when.
	Incrs  []Incr
	Expire map[string]time.Time
}

// WriteMonitor sends w in one pipeline.
func (s *Store) WriteMonitor(ctx context.Context, w MonitorWrite) error {
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		if w.Remove {
			p.ZRem(ctx, w.Registry, w.ID)
			p.Del(ctx, w.Record)
		} else {
			p.Set(ctx, w.Record, w.Data, w.Lease)
			p.ZAdd(ctx, w.Registry, redis.Z{Score: float64(w.Until), Member: w.ID})
		}
		for _, in := range w.Incrs {
			p.HIncrBy(ctx, in.Key, in.Field, in.N)
		}
		for k, at := range w.Expire {
			p.ExpireAt(ctx, k, at)
		}
		return nil
	})
	return err
}
