package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// memStore claims ticks as the Redis script does: a tick is fired if it
// is after the entry's last claimed tick, or, for an entry with no
// state, not before the runner started.
type memStore struct {
	mu    sync.Mutex
	last  map[string]time.Time
	fired map[string][]time.Time
}

func (m *memStore) fire(_ context.Context, t Tick) (Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.last[t.Entry.Name]
	switch {
	case ok && !t.At.After(last):
		return Taken, nil
	case !ok && t.At.Before(t.Since):
		return TooOld, nil
	}
	m.last[t.Entry.Name] = t.At
	m.fired[t.Entry.Name] = append(m.fired[t.Entry.Name], t.At)
	return Fired, nil
}

func TestScheduleEntryDue(t *testing.T) {
	s, err := Parse("0 * * * *", nil)
	require.NoError(t, err)
	now := at(time.UTC, 2026, 1, 1, 5, 20)
	require.Equal(t, []time.Time{at(time.UTC, 2026, 1, 1, 5, 0)}, Entry{Spec: s, Missed: 1}.Due(now, time.Minute))
	require.Equal(t, []time.Time{at(time.UTC, 2026, 1, 1, 3, 0), at(time.UTC, 2026, 1, 1, 4, 0), at(time.UTC, 2026, 1, 1, 5, 0)}, Entry{Spec: s, Missed: 3}.Due(now, time.Minute))
	require.Empty(t, Entry{Spec: s}.Due(now, time.Minute), "missed ticks are not run")
	require.Equal(t, []time.Time{at(time.UTC, 2026, 1, 1, 5, 0)}, Entry{Spec: s}.Due(now.Add(-19*time.Minute-30*time.Second), time.Minute), "a tick on time runs")
}

// TestScheduleRunnersLoop runs three runners on one manual clock over
// hundreds of ticks: each tick of each entry is fired once.
func TestScheduleRunnersLoop(t *testing.T) {
	start := at(time.UTC, 2026, 1, 1, 0, 0)
	clock := NewManualClock(start)
	every := func(s string) Spec { sp, err := Parse(s, nil); require.NoError(t, err); return sp }
	entries := []Entry{
		{Name: "seconds", Spec: every("*/10 * * * * *"), Missed: 1},
		{Name: "minute", Spec: every("* * * * *"), Missed: 1},
		{Name: "every", Spec: every("@every 45s"), Missed: 1},
	}
	store := &memStore{last: map[string]time.Time{}, fired: map[string][]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		r, err := NewRunner(Config{Entries: entries, Fire: store.fire, Clock: clock})
		require.NoError(t, err)
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.Run(ctx) }()
	}
	end := start.Add(30 * time.Minute)
	for {
		next := clock.WaitForSleepers(3)
		if next.After(end) {
			break
		}
		clock.Set(next)
	}
	cancel()
	wg.Wait()
	for _, e := range entries {
		want := ticks(e.Spec, start, end.Add(time.Nanosecond))
		require.Equal(t, want, store.fired[e.Name], e.Name)
	}
	require.Len(t, store.fired["seconds"], 181)
}
