package runtime

import (
	"context"
	"fmt"
	"time"
)

// Trimming the failed store. By default nothing is trimmed: a failed job
// stays until an operator retries, forgets, flushes or prunes it. With
// EngineConfig.FailedMaxCount or FailedMaxAge set, the script that adds
// a failed job (fail.lua, cancel.lua, failed_record.lua) drops the
// oldest past the bound and, in the same script, counts what it dropped
// in the queue's failed trimmed hash; the engine logs each trim at WARN.

// FailedTrim is what trimming dropped from a queue's failed store
// (EngineConfig.FailedMaxCount and FailedMaxAge), counted by the script
// that trimmed, so that no failed job goes without a record.
type FailedTrim struct {
	// Queue is the queue (or partition) whose store was trimmed.
	Queue string
	// Count is how many failed jobs trimming dropped in all.
	Count int64
	// Last is when the last trim happened, by the Redis clock (zero if
	// never), and LastCount how many that trim dropped.
	Last      time.Time
	LastCount int64
}

// failedBounds are the failed store's bounds as the scripts take them:
// the most jobs kept and their greatest age in ms, 0 for no bound.
func (e *Engine) failedBounds() (maxCount, maxAge int64) {
	return int64(max(e.cfg.FailedMaxCount, 0)), max(e.cfg.FailedMaxAge.Milliseconds(), 0)
}

// logTrimmed logs that trimming dropped n failed jobs of queue, if it
// dropped any.
func (e *Engine) logTrimmed(queue string, n int64) {
	if n <= 0 {
		return
	}
	e.cfg.Logger.Warn("jobgen: failed store trimmed: failed jobs dropped, counted in queue:monitor",
		"queue", queue, "dropped", n,
		"FailedMaxCount", e.cfg.FailedMaxCount, "FailedMaxAge", e.cfg.FailedMaxAge)
}

// Trimmed returns what trimming dropped from the failed stores of
// queues (each a queue, or one of its partitions), one entry per queue
// in the order given, read in one round trip. A partitioned queue's entry
// sums its partitions'.
func (s *FailedStore) Trimmed(ctx context.Context, queues ...string) ([]FailedTrim, error) {
	out := make([]FailedTrim, len(queues))
	var names []string
	var of []int // the entry of out each name adds to
	for i, q := range queues {
		if err := validateQueueOrPartition(q); err != nil {
			return nil, err
		}
		out[i].Queue = q
		parts := []string{q}
		if ps := s.e.partitionsOf(q); ps != nil {
			parts = ps.Names()
		}
		for _, p := range parts {
			names, of = append(names, p), append(of, i)
		}
	}
	if len(names) == 0 {
		return out, nil
	}
	got, err := s.e.store.FailedTrimmed(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("read failed trims: %w", err)
	}
	for j, t := range got {
		o := &out[of[j]]
		o.Count += t.Count
		if t.At > 0 && time.UnixMilli(t.At).After(o.Last) {
			o.Last, o.LastCount = time.UnixMilli(t.At), t.Last
		}
	}
	return out, nil
}
