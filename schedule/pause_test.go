package schedule_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// TestSchedulePauseAndResume pauses an entry from one process while
// another runs the schedule: its ticks are claimed and push nothing
// until it is resumed, DispatchNow still runs it, and Status shows it.
func TestSchedulePauseAndResume(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		s := schedule.New()
		s.Job(job(1, runtime.JobOptions{})).Name("sync")
		s.Job(job(2, runtime.JobOptions{})).Name("other")
		runner := b.engine(t) // the schedule process; b.bundle.engine is the operator's
		pass := func(at time.Time) map[string]schedule.TickReport {
			b.clock.Set(at)
			reports, err := s.RunDue(b.ctx, runner, schedule.Config{Clock: b.clock})
			require.NoError(t, err)
			out := map[string]schedule.TickReport{}
			for _, r := range reports {
				out[r.Entry] = r
			}
			return out
		}
		tick := func(min int) string {
			return "sync @ " + strconv.FormatInt(start.Add(time.Duration(min)*time.Minute).UnixMilli(), 10)
		}
		status := func() schedule.EntryStatus {
			st, err := s.Status(b.ctx, b.bundle.engine)
			require.NoError(t, err)
			require.Equal(t, "sync", st[0].Name)
			return st[0]
		}
		stateKey := b.prefix + ":{default}:schedule:sync"

		require.Equal(t, schedule.TickDispatched, pass(start)["sync"].Outcome)
		first := status()
		require.False(t, first.Paused)

		require.NoError(t, s.PauseEntry(b.ctx, b.bundle.engine, "sync"))
		require.NoError(t, s.PauseEntry(b.ctx, b.bundle.engine, "sync"), "pausing again does nothing")
		require.True(t, status().Paused)
		require.Equal(t, time.Duration(-1), b.rdb.TTL(b.ctx, stateKey).Val(), "a paused entry's state does not expire")

		reps := pass(start.Add(time.Minute))
		require.Equal(t, schedule.TickPaused, reps["sync"].Outcome)
		require.Equal(t, "paused", reps["sync"].Outcome.String())
		require.Equal(t, schedule.TickDispatched, reps["other"].Outcome, "only the paused entry stops")
		require.Equal(t, schedule.TickTaken, pass(start.Add(time.Minute))["sync"].Outcome, "the paused tick is claimed")
		st := status()
		require.True(t, st.LastTick.Equal(start.Add(time.Minute)))
		require.Equal(t, first.LastJobID, st.LastJobID, "the last run is still the one before the pause")
		require.True(t, st.Skipped, "the last tick pushed nothing")
		require.Empty(t, st.SkippedFor, "as the entry was paused, not still running")
		require.Equal(t, time.Duration(-1), b.rdb.TTL(b.ctx, stateKey).Val())

		id, err := s.DispatchNow(b.ctx, b.bundle.engine, "sync")
		require.NoError(t, err, "an operator's run now runs a paused entry")
		require.True(t, status().Paused, "and leaves it paused")
		require.Equal(t, schedule.TickPaused, pass(start.Add(2 * time.Minute))["sync"].Outcome)

		require.NoError(t, s.ResumeEntry(b.ctx, b.bundle.engine, "sync"))
		require.NoError(t, s.ResumeEntry(b.ctx, b.bundle.engine, "sync"), "resuming again does nothing")
		require.False(t, status().Paused)
		require.Positive(t, b.rdb.TTL(b.ctx, stateKey).Val(), "a resumed entry's state expires again")
		require.Equal(t, schedule.TickTaken, pass(start.Add(2 * time.Minute))["sync"].Outcome, "ticks claimed while paused do not run late")
		require.Equal(t, schedule.TickDispatched, pass(start.Add(3 * time.Minute))["sync"].Outcome)
		require.False(t, status().Skipped)

		got := b.queued(t, "default")
		require.Equal(t, 1, got[tick(0)])
		require.Zero(t, got[tick(1)])
		require.Zero(t, got[tick(2)])
		require.Equal(t, 1, got[tick(3)])
		found, ok, err := runtime.NewInspector(b.bundle.engine).FindJob(b.ctx, "default", id)
		require.NoError(t, err)
		require.True(t, ok, "the job dispatched now is queued")
		require.Equal(t, runtime.StateReady, found.State)

		for _, fn := range []func(context.Context, *runtime.Engine, string) error{s.PauseEntry, s.ResumeEntry} {
			err := fn(b.ctx, b.bundle.engine, "nope")
			require.ErrorIs(t, err, runtime.ErrInvalid)
			require.ErrorContains(t, err, `"nope"`)
		}
	})
}

// TestSchedulePausedNewEntry pauses an entry that has no state yet: the
// pause holds from its first tick.
func TestSchedulePausedNewEntry(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		s := schedule.New()
		s.Every(30*time.Second, job(1, runtime.JobOptions{})).Name("new").WithoutOverlapping()
		require.NoError(t, s.PauseEntry(b.ctx, b.bundle.engine, "new"))
		log := newTickLog()
		b.run(t, s, log)
		b.advance(1, start.Add(2*time.Minute))
		require.Empty(t, b.queued(t, "default"))
		log.mu.Lock()
		defer log.mu.Unlock()
		require.Equal(t, 5, log.outcomes[schedule.TickPaused], "every tick from start to +2m, claimed once")
		require.Len(t, log.outcomes, 1)
	})
}
