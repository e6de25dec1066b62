package schedule

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// PauseEntry pauses the entry named name, for every process that runs the
// schedule on e's Redis: until ResumeEntry, its ticks are claimed (they count
// as run, TickPaused) and push nothing. The flag is kept in the entry's
// state in Redis, which does not expire while it is paused, so a pause
// outlasts restarts and deploys. Pausing a paused entry does nothing.
// DispatchNow still dispatches a paused entry.
//
// An unknown name is an error wrapping runtime.ErrInvalid.
func (s *Schedule) PauseEntry(ctx context.Context, e *runtime.Engine, name string) error {
	return s.setPaused(ctx, e, name, true)
}

// ResumeEntry undoes PauseEntry: the entry's next tick after now pushes its job
// again. The ticks that fell while it was paused stay claimed, so none
// of them runs late. Resuming an entry that is not paused does nothing.
//
// An unknown name is an error wrapping runtime.ErrInvalid.
func (s *Schedule) ResumeEntry(ctx context.Context, e *runtime.Engine, name string) error {
	return s.setPaused(ctx, e, name, false)
}

// setPaused sets or clears the paused flag of the entry named name
// (schedule_pause.lua).
func (s *Schedule) setPaused(ctx context.Context, e *runtime.Engine, name string, paused bool) error {
	en, err := s.lookup(name)
	if err != nil {
		return err
	}
	eng, err := engineFor(ctx, e, en)
	if err != nil {
		return err
	}
	store := storeOf(eng)
	verb, keep := "pause", time.Duration(0)
	if !paused {
		// On resume the state expires as after a tick: StateRetention
		// after the entry's next one, by the Redis clock, which ticks
		// follow.
		now, err := store.Time(ctx)
		if err != nil {
			return fmt.Errorf("resume schedule entry %q: %w", name, err)
		}
		verb, keep = "resume", eng.Config().StateRetention
		if next := en.Next(now); !next.IsZero() {
			keep += next.Sub(now)
		}
	}
	if err := store.PauseSchedule(ctx, en.partition(eng), name, paused, keep); err != nil {
		return fmt.Errorf("%s schedule entry %q: %w", verb, name, err)
	}
	return nil
}

// partition is the partition of its queue where en's state is kept on
// e (Engine.TickPartition).
func (en *Entry) partition(e *runtime.Engine) string {
	return e.TickPartition(en.dispatch().Queue(), en.EntryName())
}
