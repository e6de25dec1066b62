package runtime

import (
	"context"
	"fmt"
	"time"
)

// PauseEntry pauses the entry named name, for every process that runs the
// schedule on e's Redis: until ResumeEntry, its ticks are claimed (they count
// as run, TickPaused) and push nothing. The flag is kept in the entry's
// state in Redis, which does not expire while it is paused, so a pause
// outlasts restarts and deploys. Pausing a paused entry does nothing.
// DispatchNow still dispatches a paused entry.
//
// An unknown name is an error wrapping ErrInvalid.
func (s *Schedule) PauseEntry(ctx context.Context, e *Engine, name string) error {
	return s.setPaused(ctx, e, name, true)
}

// ResumeEntry undoes PauseEntry: the entry's next tick after now pushes its job
// again. The ticks that fell while it was paused stay claimed, so none
// of them runs late. Resuming an entry that is not paused does nothing.
//
// An unknown name is an error wrapping ErrInvalid.
func (s *Schedule) ResumeEntry(ctx context.Context, e *Engine, name string) error {
	return s.setPaused(ctx, e, name, false)
}

// setPaused sets or clears the paused flag of the entry named name
// (schedule_pause.lua).
func (s *Schedule) setPaused(ctx context.Context, e *Engine, name string, paused bool) error {
	en, err := s.lookup(name)
	if err != nil {
		return err
	}
	eng, err := e.engineFor(ctx, en)
	if err != nil {
		return err
	}
	_, q, err := eng.entryEnvelope(en)
	if err != nil {
		return err
	}
	flag, verb, keep := 1, "pause", time.Duration(0)
	if !paused {
		// On resume the state expires as after a tick: StateRetention
		// after the entry's next one, by the Redis clock, which ticks
		// follow.
		now, err := eng.store.Time(ctx)
		if err != nil {
			return fmt.Errorf("resume schedule entry %q: %w", name, err)
		}
		flag, verb, keep = 0, "resume", eng.cfg.StateRetention
		if next := en.Next(now); !next.IsZero() {
			keep += next.Sub(now)
		}
	}
	err = eng.store.RunOne(ctx, call{Script: scriptSchedulePause, Keys: []string{eng.keys.Schedule(q, name)}, Args: []any{flag, keep.Milliseconds()}}).Err()
	if err != nil {
		return fmt.Errorf("%s schedule entry %q: %w", verb, name, err)
	}
	return nil
}

// lookup returns the entry named name, once the schedule is checked.
func (s *Schedule) lookup(name string) (*ScheduledEntry, error) {
	if _, err := s.Entries(); err != nil {
		return nil, err
	}
	en, ok := s.Entry(name)
	if !ok {
		return nil, fmt.Errorf("%w: no schedule entry is named %q", ErrInvalid, name)
	}
	return en, nil
}
