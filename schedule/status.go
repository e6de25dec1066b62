package schedule

import (
	"context"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// EntryStatus is an entry of a schedule as schedule:list shows it.
type EntryStatus struct {
	Name string
	// Spec is the cron expression with its zone, or "@every d".
	Spec  string
	Queue string
	// Next is the entry's next tick after the Redis clock's now, in its
	// zone.
	Next time.Time
	// LastTick is the last tick claimed, in the entry's zone; zero if
	// none is remembered. LastRun is when the last job was pushed (Redis
	// clock), and LastJobID that job. Skipped is set when the last tick
	// pushed nothing: SkippedFor names the job of the entry's last run,
	// still queued or running (WithoutOverlapping), or is empty when the
	// entry was paused.
	LastTick   time.Time
	LastRun    time.Time
	LastJobID  string
	Skipped    bool
	SkippedFor string
	// Paused is set while the entry is paused (PauseEntry): its ticks push
	// nothing.
	Paused bool
}

// Status returns the entries of the schedule with their next tick and
// what their last one did, as kept in e's Redis (or, for an entry on
// another connection, that connection's).
func (s *Schedule) Status(ctx context.Context, e *runtime.Engine) ([]EntryStatus, error) {
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	now, err := storeOf(e).Time(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]EntryStatus, len(entries))
	for i, en := range entries {
		eng, err := engineFor(ctx, e, en)
		if err != nil {
			return nil, err
		}
		h, err := storeOf(eng).ScheduleState(ctx, en.partition(eng), en.EntryName())
		if err != nil {
			return nil, err
		}
		inZone := func(ms int64) time.Time {
			if ms <= 0 {
				return time.Time{}
			}
			t := time.UnixMilli(ms)
			if en.loc != nil {
				t = t.In(en.loc)
			}
			return t
		}
		out[i] = EntryStatus{
			Name: en.EntryName(), Spec: en.Spec(), Queue: en.dispatch().Queue(), Next: en.Next(now),
			LastTick: inZone(h.Tick), LastRun: inZone(h.At), LastJobID: h.JobID,
			Skipped: h.Skipped, SkippedFor: h.SkippedBy, Paused: h.Paused,
		}
	}
	return out, nil
}
