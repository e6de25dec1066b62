package rdb

import (
	"context"
	"strings"

	"github.com/jobgen/jobgen/runtime/lua"
)

// Moving failed jobs to another store (runtime's EngineConfig.FailedStore):
// the engine reads a queue's failed entries, the other store saves them,
// and failed_moved.lua deletes those still failed at the time saved.

var scriptMoved = lua.Get("failed_moved")

// Moved is a failed entry another store has taken: its ID and failed-at
// time (Redis ms).
type Moved struct {
	ID string
	At int64
}

// DropMoved deletes the entries of queue's failed store in moved whose
// failed-at time is still the one given, failedPer a call, and returns
// how many went.
func (s *Store) DropMoved(ctx context.Context, queue string, moved []Moved) (int64, error) {
	var total int64
	for len(moved) > 0 {
		n := min(failedPer, len(moved))
		args := make([]any, 0, 2*n)
		for _, m := range moved[:n] {
			args = append(args, m.ID, m.At)
		}
		got, err := Call{Script: scriptMoved, Keys: s.failedKeys(queue), Args: args}.Run(ctx, s.c).Int64()
		if err != nil {
			return total, err
		}
		total += got
		moved = moved[n:]
	}
	return total, nil
}

// HookIDs returns the IDs of the jobs of queue whose failure's hooks are
// due and not yet done (the hooks set), each once.
func (s *Store) HookIDs(ctx context.Context, queue string) (map[string]bool, error) {
	ms, err := s.c.ZRange(ctx, s.keys.Queue(queue).Hooks, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ms))
	for _, m := range ms {
		if i := strings.LastIndexByte(m, ' '); i > 0 {
			out[m[:i]] = true
		}
	}
	return out, nil
}
