package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/manualclock"
)

// memStore claims ticks as the Redis script does: a tick is fired if it
// is after the entry's last claimed tick, or, for an entry with no
// state, not before the runner started.
type memStore struct {
	mu    sync.Mutex
	last  map[string]time.Time
	fired map[string][]time.Time
}

func (m *memStore) fire(_ context.Context, t loopTick) (outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.last[t.Entry.Name]
	switch {
	case ok && !t.At.After(last):
		return outTaken, nil
	case !ok && t.At.Before(t.Since):
		return outTooOld, nil
	}
	m.last[t.Entry.Name] = t.At
	m.fired[t.Entry.Name] = append(m.fired[t.Entry.Name], t.At)
	return outFired, nil
}

func TestScheduleEntryDue(t *testing.T) {
	s, err := parseSpec("0 * * * *", nil)
	require.NoError(t, err)
	now := at(time.UTC, 2026, 1, 1, 5, 20)
	require.Equal(t, []time.Time{at(time.UTC, 2026, 1, 1, 5, 0)}, loopEntry{spec: s, Missed: 1}.Due(now, time.Minute))
	require.Equal(t, []time.Time{at(time.UTC, 2026, 1, 1, 3, 0), at(time.UTC, 2026, 1, 1, 4, 0), at(time.UTC, 2026, 1, 1, 5, 0)}, loopEntry{spec: s, Missed: 3}.Due(now, time.Minute))
	require.Empty(t, loopEntry{spec: s}.Due(now, time.Minute), "missed ticks are not run")
	require.Equal(t, []time.Time{at(time.UTC, 2026, 1, 1, 5, 0)}, loopEntry{spec: s}.Due(now.Add(-19*time.Minute-30*time.Second), time.Minute), "a tick on time runs")
}

// TestScheduleRunnersLoop runs three runners on one manual clock over
// hundreds of ticks: each tick of each entry is fired once.
func TestScheduleRunnersLoop(t *testing.T) {
	start := at(time.UTC, 2026, 1, 1, 0, 0)
	clock := manualclock.New(start)
	every := func(s string) spec { sp, err := parseSpec(s, nil); require.NoError(t, err); return sp }
	entries := []loopEntry{
		{Name: "seconds", spec: every("*/10 * * * * *"), Missed: 1},
		{Name: "minute", spec: every("* * * * *"), Missed: 1},
		{Name: "every", spec: every("@every 45s"), Missed: 1},
	}
	store := &memStore{last: map[string]time.Time{}, fired: map[string][]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		r, err := newRunner(loopConfig{Entries: entries, Fire: store.fire, Clock: clock})
		require.NoError(t, err)
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.run(ctx) }()
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
		want := ticks(e.spec, start, end.Add(time.Nanosecond))
		require.Equal(t, want, store.fired[e.Name], e.Name)
	}
	require.Len(t, store.fired["seconds"], 181)
}
