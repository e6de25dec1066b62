package rdb

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
)

// GroupWaitHeads returns the head, the first member, of the wait of each
// of the first n groups on the ring of the queue of qk that it reads:
// one round trip of two commands reads the ring and the first whole+1
// members of the wait set. Members sort by group, then by turn, and the
// read begins at the first, so each group with a member among those
// read has its head there. partial is true when more than whole jobs
// wait and a group of those on the ring sorts after the last one read:
// its head is not read. The commands do not depend on the number
// of groups or of jobs.
func (s *Store) GroupWaitHeads(ctx context.Context, qk keyspace.QueueKeys, n int, whole int64) (heads []string, partial bool, err error) {
	var ring, members *redis.StringSliceCmd
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		ring = p.LRange(ctx, qk.GroupRing, 0, int64(n)-1)
		members = p.ZRange(ctx, qk.GroupWait, 0, whole)
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, false, err
	}
	if len(ring.Val()) == 0 || len(members.Val()) == 0 {
		return nil, false, nil
	}
	first := map[string]string{}
	for _, m := range members.Val() {
		g, _, ok := strings.Cut(m, "\x00")
		if _, seen := first[g]; ok && !seen {
			first[g] = m
		}
	}
	// Past the members read are only groups that sort after the last
	// one read.
	last := ""
	if int64(len(members.Val())) > whole {
		last, _, _ = strings.Cut(members.Val()[len(members.Val())-1], "\x00")
	}
	for _, g := range ring.Val() {
		if m, ok := first[g]; ok {
			heads = append(heads, m)
		} else if last != "" && g > last {
			partial = true
		}
	}
	return heads, partial, nil
}
