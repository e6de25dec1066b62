package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// mwJob is a job whose middleware its fields choose.
type mwJob struct {
	N     int
	Mode  string
	Key   string
	Limit int
	PerMs int
	Trace string // names a traces entry to record middleware order in
	Skip  bool
}

func (mwJob) JobName() string                { return "test.Middleware" }
func (mwJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j mwJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func (j mwJob) Middleware() []runtime.Middleware {
	per := time.Duration(j.PerMs) * time.Millisecond
	switch j.Mode {
	case "rate":
		return []runtime.Middleware{runtime.RateLimited(j.Key, j.Limit, per)}
	case "rate-defer":
		return []runtime.Middleware{runtime.RateLimited(j.Key, j.Limit, per).WithoutAttempt()}
	case "overlap":
		return []runtime.Middleware{runtime.WithoutOverlapping(j.Key).ReleaseAfter(10 * time.Millisecond).ExpireAfter(per)}
	case "throttle":
		return []runtime.Middleware{runtime.ThrottlesExceptions(j.Limit, per).By(j.Key)}
	case "skipif":
		return []runtime.Middleware{runtime.SkipIf(j.Skip)}
	case "skipunless":
		return []runtime.Middleware{runtime.SkipUnless(!j.Skip)}
	case "skipwhen":
		return []runtime.Middleware{runtime.SkipWhen(func(ctx context.Context) bool { return j.Skip })}
	case "trace":
		return []runtime.Middleware{tracer(j.Trace, "job")}
	}
	return nil
}

// traces records the order middleware and handlers run in, by test.
var traces sync.Map // name -> *[]string, guarded by tracesMu
var tracesMu sync.Mutex

func trace(name, s string) {
	tracesMu.Lock()
	defer tracesMu.Unlock()
	v, _ := traces.LoadOrStore(name, &[]string{})
	l := v.(*[]string)
	*l = append(*l, s)
}

func traced(name string) []string {
	tracesMu.Lock()
	defer tracesMu.Unlock()
	v, ok := traces.Load(name)
	if !ok {
		return nil
	}
	return slices.Clone(*v.(*[]string))
}

func tracer(name, label string) runtime.Middleware {
	return runtime.MiddlewareFunc(func(ctx context.Context, next func(context.Context) error) error {
		trace(name, label+">")
		err := next(ctx)
		trace(name, "<"+label)
		return err
	})
}

// starts records when handlers started.
type starts struct {
	mu sync.Mutex
	at []time.Time
}

func (s *starts) add() {
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
}

func (s *starts) list() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.at)
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

func TestMiddlewareOrder(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		name := t.Name()
		runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
			trace(j.Trace, "handler")
			return nil
		})
		b.dispatch(t, mwJob{Mode: "trace", Trace: name})
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Middleware: []runtime.Middleware{tracer(name, "w1"), tracer(name, "w2")}})
		require.Equal(t, []string{"w1>", "w2>", "job>", "handler", "<job", "<w2", "<w1"}, traced(name))
	})
}

// TestRateLimited: at most limit jobs start in any window of per. The
// limiter lets a job start at a moment, on the Redis clock, between the
// job's entering the worker's middleware and its handler's start; under
// load that span can be long. So the check times each start by its span,
// and counts as one window's only starts whose spans all lie within it.
func TestRateLimited(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		const limit, per, jobs = 3, time.Second, 9
		var mu sync.Mutex
		entered := map[string]time.Time{} // job ID -> when its latest attempt entered the middleware
		var spans []span                  // per start
		enter := runtime.MiddlewareFunc(func(ctx context.Context, next func(context.Context) error) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			entered[info.ID] = time.Now()
			mu.Unlock()
			return next(ctx)
		})
		runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			spans = append(spans, span{entered[info.ID], time.Now()})
			mu.Unlock()
			return nil
		})
		for i := range jobs {
			b.dispatch(t, mwJob{N: i, Mode: "rate", Key: "api", Limit: limit, PerMs: int(per.Milliseconds())})
		}
		// Jobs over the limit wait in the delayed set, which StopWhenEmpty
		// does not wait for: run until every job is done. The limit makes
		// that take two windows at least, and every job is tried several
		// times: on a loaded machine it takes more than eventually's 10s.
		_, stop := b.start(t, runtime.WorkerConfig{Concurrency: jobs, Tries: 100, Middleware: []runtime.Middleware{enter}})
		require.Eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, 30*time.Second, 5*time.Millisecond, "every job runs")
		stop()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, spans, jobs, "every job ran once")
		// The Redis clock and this one may differ by a little.
		const margin = 50 * time.Millisecond
		slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
		for i, first := range spans {
			n := 0
			for _, s := range spans[i:] {
				if s.to.Sub(first.from) < per-margin {
					n++
				}
			}
			require.LessOrEqual(t, n, limit, "starts certainly in the window from start %d", i)
		}
		last := slices.MaxFunc(spans, func(a, b span) int { return a.to.Compare(b.to) })
		require.GreaterOrEqual(t, last.to.Sub(spans[0].from), time.Duration(jobs/limit-1)*per-margin, "the last window's jobs waited their turn")
		require.Len(t, b.failed(t, "default"), 0)
	})
}

// TestRateLimitedAttempts: by default a job the limiter holds back uses
// an attempt each time (Laravel's RateLimited), so it runs with one
// attempt more per release; WithoutAttempt defers it with its attempt
// given back, so it runs with attempt 1 however often it was held back,
// and a job with one try is not failed by the limiter.
//
// With Prefetch the worker reserves jobs held and counts each attempt
// as the handler starts (start.lua): the deferral gives back that count.
func TestRateLimitedAttempts(t *testing.T) {
	for _, c := range []struct {
		mode     string
		prefetch int
	}{{"rate", 0}, {"rate-defer", 0}, {"rate-defer", 2}} {
		mode := c.mode
		t.Run(fmt.Sprintf("%s/prefetch=%d", mode, c.prefetch), func(t *testing.T) {
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				const jobs, per = 3, 400 * time.Millisecond
				var mu sync.Mutex
				held := map[string]int{} // job ID -> times the limiter held it back
				ranWith := map[string]int{}
				deferrals := 0
				count := runtime.MiddlewareFunc(func(ctx context.Context, next func(context.Context) error) error {
					err := next(ctx)
					if _, ok := runtime.AsRelease(err); ok {
						info, _ := runtime.JobInfoFrom(ctx)
						mu.Lock()
						held[info.ID]++
						if runtime.IsDeferral(err) {
							deferrals++
						}
						mu.Unlock()
					}
					return err
				})
				runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
					info, _ := runtime.JobInfoFrom(ctx)
					mu.Lock()
					ranWith[info.ID] = info.Attempt
					mu.Unlock()
					return nil
				})
				for i := range jobs {
					b.dispatch(t, mwJob{N: i, Mode: mode, Key: "attempts", Limit: 1, PerMs: int(per.Milliseconds())})
				}
				tries := 100
				if mode == "rate-defer" {
					tries = 1
				}
				_, stop := b.start(t, runtime.WorkerConfig{Concurrency: jobs, Prefetch: c.prefetch, Tries: tries, Middleware: []runtime.Middleware{count}})
				require.Eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, 30*time.Second, 5*time.Millisecond, "every job runs")
				stop()
				mu.Lock()
				defer mu.Unlock()
				require.Len(t, b.failed(t, "default"), 0)
				require.Len(t, ranWith, jobs, "every job ran")
				total := 0
				for id, attempt := range ranWith {
					total += held[id]
					want := 1 + held[id] // each release used an attempt
					if mode == "rate-defer" {
						want = 1
					}
					require.Equal(t, want, attempt, "job %s, held back %d times", id, held[id])
				}
				require.GreaterOrEqual(t, total, jobs-1, "one job a window: the others were held back")
				if mode == "rate-defer" {
					require.Equal(t, total, deferrals, "WithoutAttempt defers")
				} else {
					require.Zero(t, deferrals, "the default releases")
				}
			})
		})
	}
}

// span is when something happened: at some moment from from to to.
type span struct{ from, to time.Time }

func TestWithoutOverlapping(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var active, most, runs atomic.Int32
		runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
			runs.Add(1)
			if j.Key == "account-1" {
				n := active.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(50 * time.Millisecond)
				active.Add(-1)
			}
			return nil
		})
		for i := range 4 {
			b.dispatch(t, mwJob{N: i, Mode: "overlap", Key: "account-1", PerMs: 10_000})
		}
		b.dispatch(t, mwJob{N: 9, Mode: "overlap", Key: "account-2", PerMs: 10_000})
		_, stop := b.start(t, runtime.WorkerConfig{Concurrency: 5, Tries: 1000})
		eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, "every job runs")
		stop()
		require.Equal(t, int32(5), runs.Load(), "each job ran once")
		require.Equal(t, int32(1), most.Load(), "never two of one key at once")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
	})
}

// TestWithoutOverlappingLockExpires: a lock whose holder runs past
// ExpireAfter (or died) no longer keeps others out.
func TestWithoutOverlappingLockExpires(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var first, firstEnd, second atomic.Int64 // unix ms
		runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
			if j.N == 0 {
				first.Store(time.Now().UnixMilli())
				time.Sleep(2 * time.Second)
				firstEnd.Store(time.Now().UnixMilli())
				return nil
			}
			second.Store(time.Now().UnixMilli())
			return nil
		})
		b.dispatch(t, mwJob{N: 0, Mode: "overlap", Key: "k", PerMs: 600})
		_, stop := b.start(t, runtime.WorkerConfig{Concurrency: 2, Tries: 1000})
		eventually(t, func() bool { return first.Load() > 0 }, "the first job starts")
		b.dispatch(t, mwJob{N: 1, Mode: "overlap", Key: "k", PerMs: 600})
		eventually(t, func() bool { return second.Load() > 0 }, "the second job starts once the lock expired")
		require.Zero(t, firstEnd.Load(), "while the first still runs")
		// The lock was taken just before the first handler started; half
		// of ExpireAfter leaves room for a slow start under load.
		require.GreaterOrEqual(t, second.Load()-first.Load(), int64(300), "not long before ExpireAfter")
		stop()
	})
}

func TestThrottlesExceptions(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		var healthy atomic.Bool
		runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
			runs.Add(1)
			if !healthy.Load() {
				return errors.New("service down")
			}
			return nil
		})
		b.dispatch(t, mwJob{Mode: "throttle", Key: t.Name(), Limit: 2, PerMs: 1500})
		_, stop := b.start(t, runtime.WorkerConfig{Tries: 1000})
		eventually(t, func() bool { return runs.Load() == 2 }, "two exceptions")
		time.Sleep(700 * time.Millisecond)
		require.Equal(t, int32(2), runs.Load(), "then the job is held back until the decay passes")
		require.Empty(t, b.log.of(runtime.JobFailed))
		require.Empty(t, b.log.of(runtime.JobExceptionOccurred), "exceptions become releases")
		healthy.Store(true)
		eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, "it runs again after the decay and succeeds")
		stop()
		require.Equal(t, int32(3), runs.Load())
	})
}

func TestSkipMiddleware(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Middleware", func(ctx context.Context, j mwJob) error {
			rec.add(ctx, fmt.Sprint(j.N))
			return nil
		})
		b.dispatch(t,
			mwJob{N: 1, Mode: "skipif", Skip: true}, mwJob{N: 2, Mode: "skipif"},
			mwJob{N: 3, Mode: "skipunless", Skip: true}, mwJob{N: 4, Mode: "skipunless"},
			mwJob{N: 5, Mode: "skipwhen", Skip: true}, mwJob{N: 6, Mode: "skipwhen"},
		)
		_, err := runtime.Chain(mwJob{N: 7, Mode: "skipif", Skip: true}, mwJob{N: 8}).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.ElementsMatch(t, []string{"2", "4", "6", "8"}, rec.list(), "a skipped job's chain goes on")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
		require.Len(t, b.log.of(runtime.JobProcessed), 8)
	})
}

func TestMiddlewareNeedsEngine(t *testing.T) {
	t.Parallel()
	r := runtime.NewRouter()
	runtime.Register(r, "test.Middleware", func(ctx context.Context, j mwJob) error { return nil })
	ctx := runtime.WithRouter(context.Background(), r)
	err := runtime.DispatchSync(ctx, mwJob{Mode: "rate", Key: "k", Limit: 1, PerMs: 1000})
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorContains(t, err, "keeps its state in Redis")
	require.NoError(t, runtime.DispatchSync(ctx, mwJob{Mode: "skipif"}))
}

// limitedJob is rate limited whatever its fields, with the tries its
// Tries field names.
type limitedJob struct{ Tries int }

func (limitedJob) JobName() string                  { return "test.Limited" }
func (j limitedJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Tries: j.Tries} }
func (j limitedJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }
func (limitedJob) Middleware() []runtime.Middleware {
	return []runtime.Middleware{runtime.RateLimited("crm-api", 2, time.Second)}
}

// retriedLimitedJob is limitedJob with tries to spare.
type retriedLimitedJob struct{ limitedJob }

func (retriedLimitedJob) JobName() string                { return "test.RetriedLimited" }
func (retriedLimitedJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Tries: 5} }

// A worker warns at start of a job its middleware releases while it has
// one try: its first release would fail it.
func TestWorkerWarnsOfReleasingMiddlewareOnOneTry(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Limited", func(context.Context, limitedJob) error { return nil })
		runtime.Register(b.router, "test.RetriedLimited", func(context.Context, retriedLimitedJob) error { return nil })
		var logs syncBuffer
		_, stop := b.start(t, runtime.WorkerConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		stop()
		out := logs.String()
		require.Contains(t, out, `job has middleware that releases it, but one try`)
		require.Contains(t, out, `job=test.Limited middleware="RateLimited(\"crm-api\")"`)
		require.NotContains(t, out, "test.RetriedLimited", "a job with tries to spare is fine")
	})
}

// The warning names only the jobs of the queues the worker serves.
func TestWorkerWarnsOfReleasingMiddlewareOnlyForServedQueues(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Limited", func(context.Context, limitedJob) error { return nil })
		var logs syncBuffer
		_, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"elsewhere"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		stop()
		require.NotContains(t, logs.String(), "test.Limited", "test.Limited runs on default, which this worker does not serve")
	})
}
