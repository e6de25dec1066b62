package rdb

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
)

// GroupRing is what a queue's fair groups hold, as an operator reads
// them: the jobs waiting in groups, the groups on the ring of turns, the
// first of them, and the first 1,000 members of the running set.
type GroupRing struct {
	Waiting, Turns int64
	Ring, Running  []string
}

// GroupRing reads the fair groups of the queue of qk, the first n groups
// of the ring, in one round trip.
func (s *Store) GroupRing(ctx context.Context, qk keyspace.QueueKeys, n int) (GroupRing, error) {
	var waiting, turns *redis.IntCmd
	var ring, running *redis.StringSliceCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		waiting = p.ZCard(ctx, qk.GroupWait)
		turns = p.LLen(ctx, qk.GroupRing)
		ring = p.LRange(ctx, qk.GroupRing, 0, int64(n)-1)
		running = p.ZRange(ctx, qk.GroupRunning, 0, 999)
		return nil
	})
	if err != nil {
		return GroupRing{}, err
	}
	return GroupRing{Waiting: waiting.Val(), Turns: turns.Val(), Ring: ring.Val(), Running: running.Val()}, nil
}

// GroupJobs counts the waiting and the running jobs of each group of
// groups in the queue of qk, in one round trip.
func (s *Store) GroupJobs(ctx context.Context, qk keyspace.QueueKeys, groups []string) ([][2]int64, error) {
	cmds := make([][2]*redis.IntCmd, len(groups))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, g := range groups {
			cmds[k][0] = p.ZLexCount(ctx, qk.GroupWait, "["+g+"\x00", "("+g+"\x01")
			cmds[k][1] = p.ZLexCount(ctx, qk.GroupRunning, "["+g+"\x00", "("+g+"\x01")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([][2]int64, len(groups))
	for k, c := range cmds {
		out[k] = [2]int64{c[0].Val(), c[1].Val()}
	}
	return out, nil
}

// GroupTotals reads, for each queue of qks, the jobs waiting in groups,
// the groups on the ring and the jobs holding a slot of a group's
// limit, in one round trip.
func (s *Store) GroupTotals(ctx context.Context, qks []keyspace.QueueKeys) ([][3]int64, error) {
	cmds := make([][3]*redis.IntCmd, len(qks))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, qk := range qks {
			cmds[k] = [3]*redis.IntCmd{p.ZCard(ctx, qk.GroupWait), p.LLen(ctx, qk.GroupRing), p.ZCard(ctx, qk.GroupRunning)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([][3]int64, len(qks))
	for k, c := range cmds {
		out[k] = [3]int64{c[0].Val(), c[1].Val(), c[2].Val()}
	}
	return out, nil
}
