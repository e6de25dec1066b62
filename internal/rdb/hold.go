package rdb

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime/lua"
)

// A queue's hold: the field hold of its settings hash, the Redis ms
// until which no reserve takes a job of it (queue_hold.lua,
// lib/flow_limit.lua).

var scriptQueueHold = lua.Get("queue_hold")

// HoldQueues holds each queue whose settings hash and doorbell are
// settings[i] and notify[i] for ms from the Redis clock's now, unless a
// longer hold is on; ms 0 ends their holds. The calls go in one
// pipeline. It returns when the longest hold ends (zero once ended).
func (s *Store) HoldQueues(ctx context.Context, settings, notify []string, ms int64) (time.Time, error) {
	calls := make([]Call, len(settings))
	for i := range settings {
		calls[i] = Call{Script: scriptQueueHold, Keys: []string{settings[i], notify[i]}, Args: []any{ms}}
	}
	replies, err := s.Run(ctx, calls)
	if err != nil {
		return time.Time{}, err
	}
	var until int64
	for _, r := range replies {
		v, err := r.Int64Slice()
		if err != nil {
			return time.Time{}, err
		}
		if len(v) != 2 {
			return time.Time{}, fmt.Errorf("queue_hold: unexpected reply %v", v)
		}
		until = max(until, v[0])
	}
	return msTime(until), nil
}

// QueueHolds reads the holds in the settings hashes settings[i], and the
// Redis clock, in one pipeline: the time left of each hold, 0 where
// none is on.
func (s *Store) QueueHolds(ctx context.Context, settings []string) ([]time.Duration, error) {
	holds := make([]*redis.StringCmd, len(settings))
	var now *redis.TimeCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range settings {
			holds[i] = p.HGet(ctx, k, "hold")
		}
		now = p.Time(ctx)
		return nil
	})
	if err != nil && !IsNil(err) {
		return nil, err
	}
	t, err := now.Result()
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, len(settings))
	for i, h := range holds {
		v, err := h.Result()
		if IsNil(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the hold of %s: %w", settings[i], err)
		}
		if left := time.UnixMilli(Int(v)).Sub(t); left > 0 {
			out[i] = left
		}
	}
	return out, nil
}
