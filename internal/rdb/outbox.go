package rdb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime/lua"
)

// The outbox relay's keys: each queue's relayed set (keyspace.Relayed),
// whose marks outbox_push.lua adds with the jobs it pushes, and the
// backlog hash (keyspace.Outbox) that a running relay writes.

var scriptOutboxRelease = lua.Get("outbox_release")

// pendingScore is the score a mark has, plus the time of its push in
// ms, until its row is deleted (outbox_push.lua).
const pendingScore = 1e15

// marksPerCall is the most marks one outbox_release call carries.
const marksPerCall = 500

// Queues returns the queues the engine has pushed to (keyspace.Queues):
// logical names, a partitioned queue's own name for all its partitions.
func (s *Store) Queues(ctx context.Context) ([]string, error) {
	return s.c.SMembers(ctx, s.keys.Queues()).Result()
}

// HasRelayedMark reports whether queue's relayed set holds mark, pending
// or released: a relay pushed its job.
func (s *Store) HasRelayedMark(ctx context.Context, queue, mark string) (bool, error) {
	err := s.c.ZScore(ctx, s.keys.Relayed(queue), mark).Err()
	switch {
	case err == nil:
		return true, nil
	case IsNil(err):
		return false, nil
	}
	return false, err
}

// PendingMarks returns up to n marks of queue's relayed set that are
// still pending (their rows not known to be deleted) and were pushed
// before before, in Redis ms.
func (s *Store) PendingMarks(ctx context.Context, queue string, before int64, n int64) ([]string, error) {
	upTo := strconv.FormatInt(pendingScore+before, 10)
	return s.c.ZRangeByScore(ctx, s.keys.Relayed(queue), &redis.ZRangeBy{Min: "1e15", Max: upTo, Count: n}).Result()
}

// ReleaseMarks starts the countdown of the marks of deleted rows, by
// queue: each expires grace ms later (outbox_release.lua). The calls go
// in one pipeline, 500 marks a call. It returns how many marks it
// released, and the first call's error if any.
func (s *Store) ReleaseMarks(ctx context.Context, grace int64, byQueue map[string][]string) (int64, error) {
	return s.ReleaseMarksIn(ctx, s.keys.Relayed, grace, byQueue)
}

// ReleaseMarksIn is ReleaseMarks on the mark sets set names, by queue
// (keyspace's Relayed or Retried).
func (s *Store) ReleaseMarksIn(ctx context.Context, set func(queue string) string, grace int64, byQueue map[string][]string) (int64, error) {
	var calls []Call
	for q, marks := range byQueue {
		for from := 0; from < len(marks); from += marksPerCall {
			chunk := marks[from:min(from+marksPerCall, len(marks))]
			args := make([]any, 0, 1+len(chunk))
			args = append(args, grace)
			for _, m := range chunk {
				args = append(args, m)
			}
			calls = append(calls, Call{Script: scriptOutboxRelease, Keys: []string{set(q)}, Args: args})
		}
	}
	if len(calls) == 0 {
		return 0, nil
	}
	replies, err := s.Run(ctx, calls)
	var n int64
	for _, r := range replies {
		v, _ := r.Int64()
		n += v
	}
	return n, err
}

// OutboxBacklog is what a relay last saw of the outbox table, as the
// backlog hash (keyspace.Outbox) holds it.
type OutboxBacklog struct {
	Table        string
	Rows, Parked int64
	Oldest       int64 // Unix ms the oldest row was written; 0 without rows
	At           int64 // Unix ms by the Redis clock when a relay read it
}

// WriteOutboxBacklog writes b to the backlog hash, with At the Redis
// clock's time now.
func (s *Store) WriteOutboxBacklog(ctx context.Context, b OutboxBacklog) error {
	now, err := s.Time(ctx)
	if err != nil {
		return err
	}
	return s.c.HSet(ctx, s.keys.Outbox(), "table", b.Table, "backlog", b.Rows, "parked", b.Parked,
		"oldest", b.Oldest, "at", now.UnixMilli()).Err()
}

// ReadOutboxBacklog reads the backlog hash, and reports false if no
// relay has written it.
func (s *Store) ReadOutboxBacklog(ctx context.Context) (OutboxBacklog, bool, error) {
	m, err := s.c.HGetAll(ctx, s.keys.Outbox()).Result()
	if IsNil(err) || (err == nil && len(m) == 0) {
		return OutboxBacklog{}, false, nil
	}
	if err != nil {
		return OutboxBacklog{}, false, fmt.Errorf("read the outbox backlog: %w", err)
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
	return OutboxBacklog{Table: m["table"], Rows: num("backlog"), Parked: num("parked"), Oldest: num("oldest"), At: num("at")}, true, nil
}
