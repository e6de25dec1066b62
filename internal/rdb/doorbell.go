package rdb

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/send"
)

// A queue's doorbell is a list of at most one element that a push rings
// and an idle worker's BLPOP takes.

// Wait waits up to timeout for one of the doorbells keys to ring, takes
// it and returns byKey of it, the queue it stands for; "" if none rang.
// wake, if not "", is one more key to wait on, outside byKey: the
// worker's own, which returns "". On a cluster, several keys are waited
// on one BLPOP each, and wake is not (send.WaitCluster). Errors name
// the queues; an error after ctx ended is ctx's.
func (s *Store) Wait(ctx context.Context, keys []string, byKey map[string]string, wake string, timeout time.Duration) (string, error) {
	if cc, ok := s.c.(*redis.ClusterClient); ok && len(keys) > 1 {
		// A multi-key BLPOP must stay in one slot; each queue has its own.
		// These BLPOPs end when ctx does (CLIENT UNBLOCK).
		return send.WaitCluster(ctx, cc, keys, byKey, timeout)
	}
	queues := make([]string, len(keys))
	for i, k := range keys {
		queues[i] = byKey[k]
	}
	if wake != "" {
		keys = append(keys, wake)
	}
	var reply []string
	var err error
	if timeout < time.Second {
		// go-redis's BLPop rounds timeouts under a second up to one second.
		args := make([]any, 0, len(keys)+2)
		args = append(args, "BLPOP")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, fmt.Sprintf("%.3f", timeout.Seconds()))
		reply, err = s.c.Do(ctx, args...).StringSlice()
	} else {
		reply, err = s.c.BLPop(ctx, timeout.Truncate(time.Second), keys...).Result()
	}
	switch {
	case err == redis.Nil:
		return "", nil
	case err != nil:
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("wait on %v: %w", queues, err)
	case len(reply) != 2:
		return "", fmt.Errorf("wait on %v: unexpected reply %v", queues, reply)
	}
	return byKey[reply[0]], nil
}

// Wake rings the list key for ttl, in one transaction: a wait on it
// under way ends, or the next one if it starts within ttl.
func (s *Store) Wake(ctx context.Context, key string, ttl time.Duration) error {
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, key, "1")
		p.PExpire(ctx, key, ttl)
		return nil
	})
	return err
}

// Ring rings the doorbell key (send.Ring).
func (s *Store) Ring(ctx context.Context, key string) error {
	return send.Ring(ctx, s.c, key)
}
