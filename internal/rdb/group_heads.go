package rdb

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
)

// GroupHeads returns the first member of the wait set of each of groups
// in the queue of qk, the next job each will give, in one round trip; a
// group with none waiting gives no member.
func (s *Store) GroupHeads(ctx context.Context, qk keyspace.QueueKeys, groups []string) ([]string, error) {
	cmds := make([]*redis.StringSliceCmd, len(groups))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, g := range groups {
			cmds[k] = p.ZRangeByLex(ctx, qk.GroupWait, &redis.ZRangeBy{Min: "[" + g + "\x00", Max: "(" + g + "\x01", Count: 1})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cmds {
		out = append(out, c.Val()...)
	}
	return out, nil
}
