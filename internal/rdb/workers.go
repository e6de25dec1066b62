package rdb

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// The keys a worker reads and writes beside its queues' scripts: the
// restart mark, the hooks set of failed jobs, the done list an Await
// waits on.

// RestartMark reads the restart mark in key, 0 if there is none.
func (s *Store) RestartMark(ctx context.Context, key string) (int64, error) {
	n, err := s.c.Get(ctx, key).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	return n, err
}

// RingDone pushes to the done list key, which then expires after ttl,
// in one pipeline.
func (s *Store) RingDone(ctx context.Context, key string, ttl time.Duration) error {
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, key, "1")
		p.PExpire(ctx, key, ttl)
		return nil
	})
	return err
}
