package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// PeekResult reads the string result and whether the hash failedInfo
// has field id, in one round trip: found is false if result does not
// exist.
func (s *Store) PeekResult(ctx context.Context, result, failedInfo, id string) (b []byte, found, failed bool, err error) {
	var get *redis.StringCmd
	var has *redis.BoolCmd
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, result)
		has = p.HExists(ctx, failedInfo, id)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, false, err
	}
	if b, gerr := get.Bytes(); gerr == nil {
		return b, true, false, nil
	}
	return nil, false, has.Val(), nil
}

// Pop waits up to d, to the millisecond, for an element of the list key
// and takes it (BLPOP); an empty wait is no error. It waits on ctx as
// given: pass a context that does not end early, or the connection is
// dropped rather than let Redis answer.
func (s *Store) Pop(ctx context.Context, key string, d time.Duration) error {
	err := s.c.Do(ctx, "BLPOP", key, fmt.Sprintf("%.3f", d.Seconds())).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	return nil
}
