package rdb

import (
	"context"
	"strings"

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

// GroupWaitHeads returns the head, the first member, of the wait of each
// of the first n groups on the ring of the queue of qk. One round trip
// of two commands reads the ring and the first whole+1 members of the
// wait set: when that is all of it, each group's head is its first
// member there (members sort by group, then by turn); past that, one
// command per group reads its head.
func (s *Store) GroupWaitHeads(ctx context.Context, qk keyspace.QueueKeys, n int, whole int64) ([]string, error) {
	var ring, members *redis.StringSliceCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		ring = p.LRange(ctx, qk.GroupRing, 0, int64(n)-1)
		members = p.ZRange(ctx, qk.GroupWait, 0, whole)
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, err
	}
	if len(ring.Val()) == 0 || len(members.Val()) == 0 {
		return nil, nil
	}
	if int64(len(members.Val())) > whole {
		return s.GroupHeads(ctx, qk, ring.Val())
	}
	first := map[string]string{}
	for _, m := range members.Val() {
		g, _, ok := strings.Cut(m, "\x00")
		if _, seen := first[g]; ok && !seen {
			first[g] = m
		}
	}
	var out []string
	for _, g := range ring.Val() {
		if m, ok := first[g]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}
