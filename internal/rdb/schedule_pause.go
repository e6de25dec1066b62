package rdb

import (
	"context"
	"time"
)

// ScheduleClock reads the Redis clock, which a schedule's ticks follow.
func (s *Store) ScheduleClock(ctx context.Context) (time.Time, error) {
	return s.c.Time(ctx).Result()
}
