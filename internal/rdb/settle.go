package rdb

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/send"
)

// The settles of reserved jobs (ack, release, fail, finish, extend): script
// calls, with the doorbells of the queues whose workers wait for a free
// slot rung in the same round trip.

// RunRinging is Run, with the doorbells bells rung in the same pipeline
// after the calls (and again after any call sent again by its source).
// A doorbell holds at most one element.
func (s *Store) RunRinging(ctx context.Context, calls []Call, bells []string) ([]Reply, error) {
	if len(bells) == 0 {
		return send.All(ctx, s.c, calls)
	}
	ring := func(p redis.Pipeliner) {
		for _, k := range bells {
			p.RPush(ctx, k, "1")
			p.LTrim(ctx, k, 0, 0)
		}
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		send.Pipe(ctx, p, calls, cmds)
		ring(p)
		return nil
	})
	send.Again(ctx, s.c, calls, cmds, func(p redis.Pipeliner, _ []int) { ring(p) })
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return cmds, err
		}
	}
	return cmds, nil
}

// HasEntries reports, for each i, whether the hash keys[i] has the field
// fields[i], read in one pipeline.
func (s *Store) HasEntries(ctx context.Context, keys, fields []string) ([]bool, error) {
	cmds := make([]*redis.BoolCmd, len(keys))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HExists(ctx, k, fields[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	has := make([]bool, len(cmds))
	for i, c := range cmds {
		has[i] = c.Val()
	}
	return has, nil
}
