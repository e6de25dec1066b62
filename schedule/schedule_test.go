package schedule_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/manualclock"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// schedBundle is what a schedule test needs: the backend's URL and
// prefix, so that it can open an engine per schedule process, and a
// manual clock they all read.
type schedBundle struct {
	bundle
	url   string
	clock *manualclock.Clock
}

func forEachScheduleBackend(t *testing.T, start time.Time, fn func(t *testing.T, b schedBundle)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be, runtime.EngineConfig{})
			fn(t, schedBundle{bundle: b, url: be.URL, clock: manualclock.New(start)})
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
	outcomes   map[schedule.TickOutcome]int
}

func newTickLog() *tickLog {
	return &tickLog{dispatched: map[string]int{}, outcomes: map[schedule.TickOutcome]int{}}
}

func (l *tickLog) add(r schedule.TickReport) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outcomes[r.Outcome]++
	if r.Outcome == schedule.TickDispatched {
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
func (b schedBundle) run(t *testing.T, s *schedule.Schedule, log *tickLog, cfgs ...schedule.Config) proc {
	t.Helper()
	var cfg schedule.Config
	if len(cfgs) > 0 {
		cfg = cfgs[0]
	}
	cfg.Clock, cfg.Logger, cfg.OnTick = b.clock, quiet, log.add
	e := b.engine(t)
	ctx, cancel := context.WithCancel(b.ctx)
	p := proc{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		err := s.Run(ctx, e, cfg)
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
func want(t *testing.T, s *schedule.Schedule, from, to time.Time) map[string]int {
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
	s := schedule.New()
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
		"test.Job @every 5m",
		"test.Job 0 9 * * 1-5",
		"test.Job */15 * * * 0,6",
		"monthly",
		"test.Job */30 * * * * *",
		"test.Job 17 * * * *",
	}, names)

	bad := schedule.New()
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
		s := schedule.New()
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
		require.Zero(t, log.outcomes[schedule.TickFailed])
		require.Positive(t, log.outcomes[schedule.TickTaken], "the other processes found each tick taken")
		require.EqualValues(t, 31, sizes(t, b.bundle, "default").Delayed)
	})
}

// union adds the keys of m to into.
func union(into, m map[string]int) map[string]int {
	for k, v := range m {
		into[k] = v
	}
	return into
}

// TestScheduleRestartAfterDowntime stops the only schedule process, lets
// ticks go by, and starts two processes together: each entry dispatches
// the ticks its catch-up allows, once.
func TestScheduleRestartAfterDowntime(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		s := schedule.New()
		s.Job(job(1, runtime.JobOptions{})).Name("last")
		s.Job(job(2, runtime.JobOptions{})).Name("three").CatchUp(3)
		s.Job(job(3, runtime.JobOptions{})).Name("none").SkipMissed()
		cfg := schedule.Config{Grace: 10 * time.Second}
		log := newTickLog()
		first := b.run(t, s, log, cfg)
		b.advance(1, start.Add(5*time.Minute))
		first.stop()

		back := start.Add(15*time.Minute + 20*time.Second)
		b.clock.Set(back)
		b.run(t, s, log, cfg)
		b.run(t, s, log, cfg)
		end := start.Add(20 * time.Minute)
		b.advance(2, end)

		expected := want(t, s, start.Add(-time.Nanosecond), start.Add(5*time.Minute))
		tick := func(name string, min int) string {
			return name + " @ " + strconv.FormatInt(start.Add(time.Duration(min)*time.Minute).UnixMilli(), 10)
		}
		expected[tick("last", 15)] = 1
		expected[tick("three", 13)] = 1
		expected[tick("three", 14)] = 1
		expected[tick("three", 15)] = 1
		for m := 16; m <= 20; m++ {
			for _, n := range []string{"last", "three", "none"} {
				expected[tick(n, m)] = 1
			}
		}
		require.Equal(t, expected, b.queued(t, "default"))
		log.mu.Lock()
		defer log.mu.Unlock()
		require.Equal(t, expected, log.dispatched)
	})
}

// TestScheduleDSTDays runs daily entries in two zones across the days
// their clocks change: a time that does not exist runs once, at the
// first instant after it; a time that occurs twice runs once.
func TestScheduleDSTDays(t *testing.T) {
	for _, tc := range []struct {
		name  string
		zone  string
		start time.Time // UTC, the day before
		want  map[string][]string
	}{
		{"new york spring", "America/New_York", time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), map[string][]string{
			"02:30": {"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"},
			"01:30": {"2026-03-08T06:30:00Z", "2026-03-09T05:30:00Z"},
		}},
		{"new york fall", "America/New_York", time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC), map[string][]string{
			"02:30": {"2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"},
			"01:30": {"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
		}},
		{"paris spring", "Europe/Paris", time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), map[string][]string{
			"02:30": {"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"},
			"01:30": {"2026-03-29T00:30:00Z", "2026-03-29T23:30:00Z"},
		}},
		{"paris fall", "Europe/Paris", time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), map[string][]string{
			"02:30": {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
			"01:30": {"2026-10-24T23:30:00Z", "2026-10-26T00:30:00Z"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachScheduleBackend(t, tc.start, func(t *testing.T, b schedBundle) {
				s := schedule.New()
				for at := range tc.want {
					s.DailyAt(at, job(1, runtime.JobOptions{})).Timezone(tc.zone).Name(at)
				}
				log := newTickLog()
				b.run(t, s, log)
				b.run(t, s, log)
				b.advance(2, tc.start.Add(48*time.Hour))
				expected := map[string]int{}
				for at, instants := range tc.want {
					for _, i := range instants {
						ti, err := time.Parse(time.RFC3339, i)
						require.NoError(t, err)
						expected[at+" @ "+strconv.FormatInt(ti.UnixMilli(), 10)] = 1
					}
				}
				require.Equal(t, expected, b.queued(t, "default"))
			})
		})
	}
}

// TestScheduleWithoutOverlapping runs an entry whose job is slow: the
// ticks that fall due while it is queued or running push nothing, and
// the first tick after it ended runs.
func TestScheduleWithoutOverlapping(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		started, finish := make(chan int, 10), make(chan struct{})
		router := runtime.NewRouter()
		runtime.Register(router, "test.Job", func(ctx context.Context, j testJob) error {
			started <- j.N
			<-finish
			return nil
		})
		w, err := runtime.NewWorker(b.bundle.engine, router, runtime.WorkerConfig{Logger: quiet, Sleep: 50 * time.Millisecond})
		require.NoError(t, err)
		wctx, stopWorker := context.WithCancel(b.ctx)
		wdone := make(chan error, 1)
		go func() { wdone <- w.Run(wctx) }()
		t.Cleanup(func() { stopWorker(); <-wdone })

		s := schedule.New()
		s.Job(job(7, runtime.JobOptions{})).Name("slow").WithoutOverlapping()
		log := newTickLog()
		b.run(t, s, log)
		b.run(t, s, log)
		b.advance(2, start) // the first pass, at start
		require.Equal(t, 7, <-started)

		b.advance(2, start.Add(2*time.Minute)) // two ticks while it runs
		st, err := s.Status(b.ctx, b.bundle.engine)
		require.NoError(t, err)
		require.Len(t, st, 1)
		require.True(t, st[0].Skipped)
		require.True(t, st[0].LastTick.Equal(start.Add(2*time.Minute)))
		require.Equal(t, st[0].LastJobID, st[0].SkippedFor)

		finish <- struct{}{}
		lock := b.prefix + ":unique:{default}:schedule:slow"
		eventually(t, func() bool { return b.rdb.Exists(b.ctx, lock).Val() == 0 }, "the lock goes when the job ends")

		b.advance(2, start.Add(3*time.Minute))
		require.Equal(t, 7, <-started)
		close(finish)

		log.mu.Lock()
		defer log.mu.Unlock()
		require.Equal(t, map[string]int{
			"slow @ " + strconv.FormatInt(start.UnixMilli(), 10):                    1,
			"slow @ " + strconv.FormatInt(start.Add(3*time.Minute).UnixMilli(), 10): 1,
		}, log.dispatched)
		require.Equal(t, 2, log.outcomes[schedule.TickOverlapping], "one per skipped tick, the other process finding it taken")
	})
}

// TestScheduleTwoVersions runs two processes with different versions of
// the schedule, as during a rolling deploy: an entry in both is
// dispatched once per tick, an entry in one version only by it, and an
// entry removed stops with the last process that has it.
func TestScheduleTwoVersions(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		v1 := schedule.New()
		v1.Cron("*/10 * * * * *", job(1, runtime.JobOptions{})).Name("sync")
		v1.Job(job(2, runtime.JobOptions{})).Name("removed")
		v2 := schedule.New()
		v2.Cron("*/10 * * * * *", job(11, runtime.JobOptions{})).Name("sync") // new payload
		v2.Every(30*time.Second, job(3, runtime.JobOptions{})).Name("added")

		log := newTickLog()
		old := b.run(t, v1, log)
		b.run(t, v2, log)
		mid := start.Add(10 * time.Minute)
		b.advance(2, mid)
		old.stop()
		end := start.Add(15 * time.Minute)
		b.advance(1, end)

		from := start.Add(-time.Nanosecond)
		expected := union(want(t, v2, from, end), want(t, v1, from, mid))
		require.Equal(t, expected, b.queued(t, "default"))
	})
}

// TestScheduleStatusAndDispatchNow reads what schedule:list shows and
// dispatches an entry now, as schedule:test does.
func TestScheduleStatusAndDispatchNow(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		s := schedule.New()
		s.DailyAt("03:00", job(1, runtime.JobOptions{})).Timezone("Europe/Paris").OnQueue("nightly").Name("prune")
		s.Job(job(2, runtime.JobOptions{})).Name("lock").WithoutOverlapping(time.Hour)
		reports, err := s.RunDue(b.ctx, b.bundle.engine, schedule.Config{Clock: b.clock})
		require.NoError(t, err)
		require.Len(t, reports, 2)
		st, err := s.Status(b.ctx, b.bundle.engine)
		require.NoError(t, err)
		require.Equal(t, "prune", st[0].Name)
		require.Equal(t, "0 3 * * * Europe/Paris", st[0].Spec)
		require.Equal(t, "nightly", st[0].Queue)
		require.Equal(t, "Europe/Paris", st[0].Next.Location().String())
		require.Equal(t, 3, st[0].Next.Hour())
		require.True(t, st[0].LastTick.IsZero(), "no tick of prune was due")
		require.True(t, st[1].LastTick.Equal(start))
		require.NotEmpty(t, st[1].LastJobID)

		id, err := s.DispatchNow(b.ctx, b.bundle.engine, "prune")
		require.NoError(t, err)
		require.NotEmpty(t, id)
		require.EqualValues(t, 1, sizes(t, b.bundle, "nightly").Ready)
		_, err = s.DispatchNow(b.ctx, b.bundle.engine, "lock")
		require.ErrorIs(t, err, runtime.ErrDuplicate, "its tick's job still holds the lock")
		_, err = s.DispatchNow(b.ctx, b.bundle.engine, "nothing")
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}

// TestSchedulePartitionedQueue schedules into a partitioned queue: an
// entry's state and pushes stay in one partition, chosen by its name,
// so that the claim and the push are one call on a cluster too.
func TestSchedulePartitionedQueue(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		cfg := runtime.EngineConfig{Prefix: b.prefix, Partitions: map[string]int{"default": 3}}
		s := schedule.New()
		for i := range 6 {
			s.Job(job(i, runtime.JobOptions{})).Name("p" + strconv.Itoa(i))
		}
		for range 2 {
			e, err := runtime.Open(b.ctx, b.url, cfg)
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })
			_, err = s.RunDue(b.ctx, e, schedule.Config{Clock: b.clock})
			require.NoError(t, err)
		}
		got := map[string]int{}
		parts := map[string]bool{}
		for _, p := range runtime.PartitionNames("default", 3) {
			for k, v := range b.queued(t, p) {
				got[k] += v
				parts[p] = true
			}
		}
		require.Equal(t, want(t, s, start.Add(-time.Nanosecond), start), got)
		require.Greater(t, len(parts), 1, "entries spread over the partitions")
		e, err := runtime.Open(b.ctx, b.url, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = e.Close() })
		st, err := s.Status(b.ctx, e)
		require.NoError(t, err)
		for _, entry := range st {
			require.True(t, entry.LastTick.Equal(start), entry.Name)
		}
	})
}

// TestScheduleUniqueJob schedules a job type that is unique of its own
// (UniqueFor): while its last job is queued, a tick pushes nothing and is
// not claimed, so it runs once the lock is free, if it is still the
// entry's latest tick.
func TestScheduleUniqueJob(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	forEachScheduleBackend(t, start, func(t *testing.T, b schedBundle) {
		s := schedule.New()
		s.Job(job(1, runtime.JobOptions{UniqueFor: time.Hour})).Name("unique")
		cfg := schedule.Config{Clock: b.clock}
		pass := func() schedule.TickReport {
			reports, err := s.RunDue(b.ctx, b.bundle.engine, cfg)
			require.NoError(t, err)
			require.Len(t, reports, 1)
			return reports[0]
		}
		first := pass()
		require.Equal(t, schedule.TickDispatched, first.Outcome)

		b.clock.Set(start.Add(time.Minute))
		held := pass()
		require.Equal(t, schedule.TickOverlapping, held.Outcome)
		require.Equal(t, first.JobID, held.JobID)
		st, err := s.Status(b.ctx, b.bundle.engine)
		require.NoError(t, err)
		require.True(t, st[0].LastTick.Equal(start), "the held tick is not claimed")

		// The job runs and releases its lock; the held tick, still the
		// latest, is dispatched at the next pass.
		router := runtime.NewRouter()
		runtime.Register(router, "test.Job", func(context.Context, testJob) error { return nil })
		w, err := runtime.NewWorker(b.bundle.engine, router, runtime.WorkerConfig{Logger: quiet, StopWhenEmpty: true})
		require.NoError(t, err)
		require.NoError(t, w.Run(b.ctx))
		require.Zero(t, b.rdb.Exists(b.ctx, b.prefix+":unique:test.Job").Val(), "the worker released the lock")
		b.clock.Set(start.Add(time.Minute + 30*time.Second))
		again := pass()
		require.Equal(t, schedule.TickDispatched, again.Outcome)
		require.True(t, again.Tick.Equal(start.Add(time.Minute)))
	})
}
