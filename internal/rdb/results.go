package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Peek is what PeekResult found of one job.
type Peek struct {
	Result []byte
	Found  bool // Result is the job's result
	Failed bool // the failed store holds the job
	// Pending is true while the queue holds the job (waiting, delayed
	// or running): its payloads hash has it.
	Pending bool
}

// PeekResult reads the string result, whether the hash failedInfo has
// field id and whether the hash payloads has it, in one round trip and
// one transaction (the keys share the queue's slot): an ack or a fail
// that moves the job between them cannot fall between the reads, so a
// job the queue knows is always seen in one of them.
func (s *Store) PeekResult(ctx context.Context, result, failedInfo, payloads, id string) (Peek, error) {
	var get *redis.StringCmd
	var failed, pending *redis.BoolCmd
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, result)
		failed = p.HExists(ctx, failedInfo, id)
		pending = p.HExists(ctx, payloads, id)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Peek{}, err
	}
	if b, gerr := get.Bytes(); gerr == nil {
		return Peek{Result: b, Found: true}, nil
	}
	return Peek{Failed: failed.Val(), Pending: pending.Val()}, nil
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
