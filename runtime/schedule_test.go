package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/internal/schedule"
	"github.com/jobgen/jobgen/runtime"
)

// schedBundle is what a schedule test needs: the backend's URL and
// prefix, so that it can open an engine per schedule process, and a
// manual clock they all read.
type schedBundle struct {
	bundle
	url   string
	clock *schedule.ManualClock
}

func forEachScheduleBackend(t *testing.T, start time.Time, fn func(t *testing.T, b schedBundle)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be, runtime.EngineConfig{})
			fn(t, schedBundle{bundle: b, url: be.URL, clock: schedule.NewManualClock(start)})
		})
	}
}

// engine opens another engine on the same Redis and prefix: one
// schedule process.
func (b schedBundle) engine(t *testing.T) *runtime.Engine {
	t.Helper()
	e, err := runtime.Open(b.ctx, b.url, runtime.EngineConfig{Prefix: b.prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// ticks counts the ticks the processes claimed, from their reports.
type tickLog struct {
	mu         sync.Mutex
	dispatched map[string]int // "entry @ tick" -> dispatches reported
	outcomes   map[runtime.TickOutcome]int
}

func newTickLog() *tickLog {
	return &tickLog{dispatched: map[string]int{}, outcomes: map[runtime.TickOutcome]int{}}
}

func (l *tickLog) add(r runtime.TickReport) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outcomes[r.Outcome]++
	if r.Outcome == runtime.TickDispatched {
		l.dispatched[r.Entry+" @ "+strconv.FormatInt(r.Tick.UnixMilli(), 10)]++
	}
}

// proc is one schedule process running in a goroutine.
type proc struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (p proc) stop() { p.cancel(); <-p.done }

// run starts a process running s on its own engine.
func (b schedBundle) run(t *testing.T, s *runtime.Schedule, log *tickLog) proc {
	t.Helper()
	e := b.engine(t)
	ctx, cancel := context.WithCancel(b.ctx)
	p := proc{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		err := s.Run(ctx, e, runtime.ScheduleConfig{Clock: b.clock, Logger: quiet, OnTick: log.add})
		if err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(p.stop)
	return p
}

// advance moves the clock from tick to tick up to end, each time once
// all n processes sleep, so that every process passes at every tick.
func (b schedBundle) advance(n int, end time.Time) {
	for {
		next := b.clock.WaitForSleepers(n)
		if next.After(end) {
			return
		}
		b.clock.Set(next)
	}
}

// queued counts the jobs waiting in queue by the schedule entry and tick
// their tags name: "entry @ tick".
func (b schedBundle) queued(t *testing.T, queue string) map[string]int {
	t.Helper()
	payloads, err := b.rdb.HGetAll(b.ctx, b.prefix+":{"+queue+"}:payloads").Result()
	require.NoError(t, err)
	out := map[string]int{}
	for id, p := range payloads {
		env, err := runtime.DecodeEnvelope(queue, id, []byte(p))
		require.NoError(t, err)
		var entry, tick string
		for _, tag := range env.Tags {
			if v, ok := strings.CutPrefix(tag, "schedule:"); ok {
				entry = v
			}
			if v, ok := strings.CutPrefix(tag, "tick:"); ok {
				tick = v
			}
		}
		out[entry+" @ "+tick]++
	}
	return out
}

// want lists each tick of the entries in (from, to] once.
func want(t *testing.T, s *runtime.Schedule, from, to time.Time) map[string]int {
	t.Helper()
	entries, err := s.Entries()
	require.NoError(t, err)
	out := map[string]int{}
	for _, e := range entries {
		for tk := e.Next(from); !tk.IsZero() && !tk.After(to); tk = e.Next(tk) {
			out[e.EntryName()+" @ "+strconv.FormatInt(tk.UnixMilli(), 10)] = 1
		}
	}
	return out
}

func TestScheduleEntries(t *testing.T) {
	s := runtime.NewSchedule()
	s.Cron("0 3 * * *", job(1, runtime.JobOptions{})).Timezone("Europe/Paris").WithoutOverlapping()
	s.Every(5*time.Minute, job(2, runtime.JobOptions{}))
	s.DailyAt("09:00", job(3, runtime.JobOptions{})).Weekdays()
	s.Job(job(4, runtime.JobOptions{})).EveryFifteenMinutes().Weekends()
	s.Job(job(5, runtime.JobOptions{})).Monthly().Name("monthly")
	s.Cron("*/30 * * * * *", job(6, runtime.JobOptions{}))
	s.Cron("@hourly", job(7, runtime.JobOptions{})).HourlyAt(17)
	entries, err := s.Entries()
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.EntryName())
	}
	require.Equal(t, []string{
		"test.Job 0 3 * * * Europe/Paris",
		"test.Job @every 5m0s",
		"test.Job 0 9 * * 1-5",
		"test.Job */15 * * * 0,6",
		"monthly",
		"test.Job */30 * * * * *",
		"test.Job 17 * * * *",
	}, names)

	bad := runtime.NewSchedule()
	bad.DailyAt("25:00", job(1, runtime.JobOptions{}))
	bad.Every(5*time.Minute, job(1, runtime.JobOptions{})).Weekdays()
	bad.Cron("0 3 * * *", job(1, runtime.JobOptions{})).Timezone("Mars/Olympus")
	bad.Hourly(job(1, runtime.JobOptions{}))
	bad.Hourly(job(2, runtime.JobOptions{}))
	_, err = bad.Entries()
	require.ErrorIs(t, err, runtime.ErrInvalid)
	for _, part := range []string{"DailyAt(\"25:00\")", "takes no day or time modifier", "Mars/Olympus", "two schedule entries are named \"test.Job 0 * * * *\""} {
		require.Contains(t, err.Error(), part)
	}
}

// TestScheduleThreeProcesses runs three schedule processes, each with
// its own engine, on one manual clock, over hundreds of ticks of several
// entries: each tick is dispatched exactly once.
func TestScheduleThreeProcesses(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		s := runtime.NewSchedule()
		s.Cron("*/10 * * * * *", job(1, runtime.JobOptions{}))
		s.Job(job(2, runtime.JobOptions{})).EveryMinute()
		s.Every(45*time.Second, job(3, runtime.JobOptions{}))
		s.Cron("*/5 * * * *", job(4, runtime.JobOptions{Queue: "reports"})).Timezone("America/New_York")
		s.Job(job(5, runtime.JobOptions{})).EveryMinute().Delay(time.Hour).Name("delayed")
		log := newTickLog()
		for range 3 {
			b.run(t, s, log)
		}
		end := start.Add(30 * time.Minute)
		b.advance(3, end)

		expected := want(t, s, start.Add(-time.Nanosecond), end)
		require.Greater(t, len(expected), 250)
		got := b.queued(t, "default")
		for k, v := range b.queued(t, "reports") {
			got[k] += v
		}
		require.Equal(t, expected, got, "jobs in Redis per tick")
		log.mu.Lock()
		defer log.mu.Unlock()
		require.Equal(t, expected, log.dispatched, "dispatches reported per tick")
		require.Zero(t, log.outcomes[runtime.TickFailed])
		require.Positive(t, log.outcomes[runtime.TickTaken], "the other processes found each tick taken")
		require.EqualValues(t, 31, sizes(t, b.bundle, "default").Delayed)
	})
}
