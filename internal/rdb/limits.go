package rdb

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Flow limits in a queue's settings hash (a concurrency limit, a rate),
// and the middleware's exception throttles.

// QueueFlow is a change to the flow limits in a queue's settings hash.
type QueueFlow struct {
	// SetLimit changes the concurrency limit to Limit; 0 removes it.
	SetLimit bool
	Limit    int
	// SetRate changes the rate to Rate per PerMs ms; a Rate of 0 removes
	// it, and the state of its current window.
	SetRate bool
	Rate    int
	PerMs   int64
}

// SetQueueFlow writes f to the settings hash settings and rings the
// doorbell notify, in one transaction.
func (s *Store) SetQueueFlow(ctx context.Context, settings, notify string, f QueueFlow) error {
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		switch {
		case !f.SetLimit:
		case f.Limit == 0:
			p.HDel(ctx, settings, "limit")
		default:
			p.HSet(ctx, settings, "limit", f.Limit)
		}
		switch {
		case !f.SetRate:
		case f.Rate == 0:
			p.HDel(ctx, settings, "rate", "rate_ms", "win", "used")
		default:
			p.HSet(ctx, settings, "rate", f.Rate, "rate_ms", f.PerMs)
		}
		p.RPush(ctx, notify, "1")
		p.LTrim(ctx, notify, 0, 0)
		return nil
	})
	return err
}

// QueueFlowRead is what a queue's settings hash says of its flow limits,
// and how many of its jobs are reserved.
type QueueFlowRead struct {
	Limit, Rate, PerMs      int64
	HeldByLimit, HeldByRate int64
	Running                 int64
	// Err is the error of the read, if it failed.
	Err error
}

// QueueFlows reads the flow limits in the settings hashes settings[i],
// and the size of the reserved sets reserved[i], in one pipeline.
func (s *Store) QueueFlows(ctx context.Context, settings, reserved []string) []QueueFlowRead {
	fields := make([]*redis.SliceCmd, len(settings))
	running := make([]*redis.IntCmd, len(settings))
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range settings {
			fields[i] = p.HMGet(ctx, settings[i], "limit", "rate", "rate_ms", "held_limit", "held_rate")
			running[i] = p.ZCard(ctx, reserved[i])
		}
		return nil
	})
	out := make([]QueueFlowRead, len(settings))
	for i := range settings {
		v, err := fields[i].Result()
		if err != nil {
			out[i].Err = err
			continue
		}
		n, err := running[i].Result()
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i] = QueueFlowRead{Limit: Int(v[0]), Rate: Int(v[1]), PerMs: Int(v[2]),
			HeldByLimit: Int(v[3]), HeldByRate: Int(v[4]), Running: n}
	}
	return out
}

// ThrottleCount reads the exceptions counted in the throttle set key and
// its time to live, in one transaction.
func (s *Store) ThrottleCount(ctx context.Context, key string) (count int64, ttl time.Duration, err error) {
	var n *redis.IntCmd
	var t *redis.DurationCmd
	if _, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.SCard(ctx, key)
		t = p.PTTL(ctx, key)
		return nil
	}); err != nil {
		return 0, 0, err
	}
	return n.Val(), t.Val(), nil
}

// ThrottleClear deletes the throttle set key.
func (s *Store) ThrottleClear(ctx context.Context, key string) error {
	return s.c.Del(ctx, key).Err()
}
