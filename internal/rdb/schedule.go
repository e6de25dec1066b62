package rdb

import (
	"context"
	"strconv"
	"time"

	"github.com/jobgen/jobgen/runtime/lua"
)

// A schedule entry's state is a hash in the slot of its queue
// (keyspace.Schedule), which schedule_tick.lua writes as it claims a
// tick and schedule_pause.lua as the entry is paused or resumed.

var scriptSchedulePause = lua.Get("schedule_pause")

// ScheduleState is a schedule entry's state as its hash holds it.
type ScheduleState struct {
	// Tick is the last tick claimed, in Unix ms; 0 if none.
	Tick int64
	// At is when the job of the last run was pushed (Redis clock, Unix
	// ms), and JobID that job.
	At    int64
	JobID string
	// Skipped is set when the last tick claimed pushed nothing;
	// SkippedBy is then the job that held the entry's lock, or empty if
	// the entry was paused.
	Skipped   bool
	SkippedBy string
	// Paused is set while the entry is paused.
	Paused bool
}

// ScheduleState reads the state of the schedule entry named entry whose
// jobs go to queue (a partition of a partitioned queue); the zero state
// if it has none.
func (s *Store) ScheduleState(ctx context.Context, queue, entry string) (ScheduleState, error) {
	h, err := s.Hash(ctx, s.keys.Schedule(queue, entry))
	if err != nil {
		return ScheduleState{}, err
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(h[k], 10, 64); return n }
	return ScheduleState{
		Tick:      num("tick"),
		At:        num("at"),
		JobID:     h["id"],
		Skipped:   h["skipped_at"] != "" || h["skipped_by"] != "",
		SkippedBy: h["skipped_by"],
		Paused:    h["paused"] != "",
	}, nil
}

// PauseSchedule sets (paused) or clears the paused flag of the schedule
// entry named entry whose jobs go to queue (schedule_pause.lua). A
// paused entry's state does not expire; on resume it expires keep from
// now.
func (s *Store) PauseSchedule(ctx context.Context, queue, entry string, paused bool, keep time.Duration) error {
	flag := 0
	if paused {
		flag = 1
	}
	return s.RunOne(ctx, Call{Script: scriptSchedulePause, Keys: []string{s.keys.Schedule(queue, entry)}, Args: []any{flag, keep.Milliseconds()}}).Err()
}
