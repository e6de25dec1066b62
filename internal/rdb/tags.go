package rdb

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
)

// SetTag adds tag to (add) or removes it from the set of monitored tags
// (keyspace MonitoredTags) and the monitored sets of queues (physical),
// in one pipeline; a tag removed loses its sets of jobs (TagJobs) too.
// The global set is written first, so that a queue registered meanwhile
// (AddQueue, then CopyTags) sees the tag, or is seen.
func (s *Store) SetTag(ctx context.Context, tag string, queues []string, add bool) error {
	global := s.keys.MonitoredTags()
	var err error
	if add {
		err = s.c.SAdd(ctx, global, tag).Err()
	} else {
		err = s.c.SRem(ctx, global, tag).Err()
	}
	if err != nil || len(queues) == 0 {
		return err
	}
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, q := range queues {
			qk := s.keys.Queue(q)
			if add {
				p.SAdd(ctx, qk.Monitored, tag)
				continue
			}
			p.SRem(ctx, qk.Monitored, tag)
			p.Del(ctx, qk.TagJobs(tag))
		}
		return nil
	})
	return err
}

// CopyTags writes the monitored tags into the monitored sets of queues
// (physical: a new queue's partitions), and returns them.
func (s *Store) CopyTags(ctx context.Context, queues []string) ([]string, error) {
	tags, err := s.c.SMembers(ctx, s.keys.MonitoredTags()).Result()
	if err != nil || len(tags) == 0 {
		return tags, err
	}
	members := make([]any, len(tags))
	for i, t := range tags {
		members[i] = t
	}
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, q := range queues {
			p.SAdd(ctx, s.keys.Queue(q).Monitored, members...)
		}
		return nil
	})
	return tags, err
}

// TagEntry is a job recorded under a monitored tag: its ID and when it
// was pushed (Redis unix ms).
type TagEntry struct {
	ID string
	At int64
}

// TagJobs reads the newest limit entries of tag's set of each queue
// (physical), in one pipeline: one ZREVRANGE a queue.
func (s *Store) TagJobs(ctx context.Context, tag string, queues []string, limit int) ([][]TagEntry, error) {
	cmds := make([]*redis.ZSliceCmd, len(queues))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, q := range queues {
			cmds[i] = p.ZRevRangeWithScores(ctx, s.keys.Queue(q).TagJobs(tag), 0, int64(limit)-1)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, err
	}
	out := make([][]TagEntry, len(queues))
	for i, c := range cmds {
		for _, z := range c.Val() {
			id, _ := z.Member.(string)
			out[i] = append(out[i], TagEntry{ID: id, At: int64(z.Score)})
		}
	}
	return out, nil
}

// Where a job is, by JobPlaces.
const (
	PlaceGone     = iota // in none of them
	PlaceQueued          // its payload is in the queue: ready or delayed
	PlaceReserved        // reserved: running
	PlaceFinished        // in the record of finished jobs
	PlaceFailed          // in the failed store
)

// JobPlaces says where each of ids is in queue (physical), in one
// pipeline: one HEXISTS a job (a payload may be large), then one
// ZMSCORE each of the reserved set, the failed store and the record of
// finished jobs.
func (s *Store) JobPlaces(ctx context.Context, qk keyspace.QueueKeys, finished string, ids []string) ([]int, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	has := make([]*redis.BoolCmd, len(ids))
	var res, failed, fin *redis.FloatSliceCmd
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			has[i] = p.HExists(ctx, qk.Payloads, id)
		}
		res = p.ZMScore(ctx, qk.Reserved, ids...)
		failed = p.ZMScore(ctx, qk.Failed, ids...)
		fin = p.ZMScore(ctx, finished, ids...)
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, err
	}
	out := make([]int, len(ids))
	for i := range ids {
		// ZMSCORE answers 0 for a member it lacks
		switch {
		case at(failed, i):
			out[i] = PlaceFailed
		case at(fin, i):
			out[i] = PlaceFinished
		case at(res, i):
			out[i] = PlaceReserved
		case has[i].Val():
			out[i] = PlaceQueued
		}
	}
	return out, nil
}

func at(c *redis.FloatSliceCmd, i int) bool {
	v := c.Val()
	return i < len(v) && v[i] != 0
}
