package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestWorkerOptions(t *testing.T) {
	t.Run("once", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			var runs atomic.Int32
			runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { runs.Add(1); return nil })
			b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{}), job(3, runtime.JobOptions{}))
			w := b.runToEnd(t, runtime.WorkerConfig{Once: true, Concurrency: 5})
			require.Equal(t, "once", w.StopReason())
			require.Equal(t, int32(1), runs.Load())
			require.Equal(t, int64(2), sizes(t, b.bundle, "default").Ready)
		})
	})
	t.Run("once on an empty queue waits one Sleep, then stops", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			start := time.Now()
			w := b.runToEnd(t, runtime.WorkerConfig{Once: true, Sleep: 100 * time.Millisecond})
			require.Equal(t, "once", w.StopReason())
			require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
		})
	})
	t.Run("max jobs", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			var runs atomic.Int32
			runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { runs.Add(1); return nil })
			for i := range 10 {
				b.dispatch(t, job(i, runtime.JobOptions{}))
			}
			w := b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 4, Concurrency: 3})
			require.Equal(t, "max jobs", w.StopReason())
			require.Equal(t, int32(4), runs.Load())
			require.Equal(t, runtime.Sizes{Ready: 6}, sizes(t, b.bundle, "default"))
		})
	})
	t.Run("max time", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			start := time.Now()
			w := b.runToEnd(t, runtime.WorkerConfig{MaxTime: 300 * time.Millisecond, Sleep: 50 * time.Millisecond})
			require.Equal(t, "max time", w.StopReason())
			require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
		})
	})
	t.Run("memory", func(t *testing.T) {
		// The heap is the process's, so this runs alone, on one backend,
		// from a measured baseline.
		be := redistest.Backends(t)[0]
		b := wbundle{bundle: setup(t, be, runtime.EngineConfig{}), router: runtime.NewRouter(), log: &eventLog{}}
		b.ctx = runtime.WithDispatcher(b.ctx, b.engine)
		var hold [][]byte
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			hold = append(hold, make([]byte, 64<<20))
			return nil
		})
		for i := range 5 {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		w := b.runToEnd(t, runtime.WorkerConfig{Memory: int(ms.HeapAlloc>>20) + 32, Concurrency: 1})
		require.Equal(t, "memory", w.StopReason())
		require.Equal(t, int64(4), sizes(t, b.bundle, "default").Ready, "it stopped after the first job")
		require.Len(t, hold, 1)
	})
	t.Run("concurrency", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			var now, peak atomic.Int32
			runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
				n := now.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(50 * time.Millisecond)
				now.Add(-1)
				return nil
			})
			for i := range 20 {
				b.dispatch(t, job(i, runtime.JobOptions{}))
			}
			b.runToEnd(t, runtime.WorkerConfig{Concurrency: 4, StopWhenEmpty: true})
			require.Equal(t, int32(4), peak.Load())
		})
	})
	t.Run("stop when empty: after its own jobs, not waiting for delayed ones", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			var rec recorder
			runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
				info, _ := runtime.JobInfoFrom(ctx)
				rec.add(ctx, fmt.Sprintf("%s#%d", j.Tag, info.Attempt))
				switch {
				case j.Tag == "slow":
					time.Sleep(300 * time.Millisecond)
				case j.Tag == "flaky" && info.Attempt == 1, j.Tag == "backoff":
					return errors.New("not yet")
				}
				return nil
			})
			_, err := runtime.NewPendingDispatch(tagged(1, "later", runtime.JobOptions{})).Delay(time.Minute).Dispatch(b.ctx)
			require.NoError(t, err)
			_, err = runtime.NewPendingDispatch(tagged(2, "due", runtime.JobOptions{})).Delay(20 * time.Millisecond).Dispatch(b.ctx)
			require.NoError(t, err)
			b.dispatch(t,
				tagged(3, "slow", runtime.JobOptions{}),
				tagged(4, "flaky", runtime.JobOptions{Tries: 2}),
				tagged(5, "backoff", runtime.JobOptions{Tries: 2, Backoff: []time.Duration{time.Minute}}))
			time.Sleep(50 * time.Millisecond) // "due" is due

			start := time.Now()
			w := b.runToEnd(t, runtime.WorkerConfig{Concurrency: 2, Prefetch: 2, StopWhenEmpty: true})
			require.Equal(t, "empty", w.StopReason())
			require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the slow job finished first")
			require.ElementsMatch(t, []string{"due#1", "slow#1", "flaky#1", "flaky#2", "backoff#1"}, rec.list(),
				"a retry with no backoff is ready, so it runs; one with a backoff is delayed, so it does not")
			require.Equal(t, runtime.Sizes{Delayed: 2}, sizes(t, b.bundle, "default"),
				"every job it reserved was settled and acked; the delayed ones wait")
		})
	})
	t.Run("rest", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			var rec recorder
			runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { rec.add(ctx, ""); return nil })
			b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{}), job(3, runtime.JobOptions{}))
			b.runToEnd(t, runtime.WorkerConfig{Concurrency: 1, Rest: 100 * time.Millisecond, StopWhenEmpty: true})
			require.Len(t, rec.at, 3)
			require.GreaterOrEqual(t, rec.at[1].Sub(rec.at[0]), 100*time.Millisecond)
			require.GreaterOrEqual(t, rec.at[2].Sub(rec.at[1]), 100*time.Millisecond)
		})
	})
}

func TestWorkerConfigValidation(t *testing.T) {
	e, err := runtime.Open(context.Background(), "embedded://"+t.Name(), runtime.EngineConfig{})
	require.NoError(t, err)
	defer e.Close()
	cases := map[string]runtime.WorkerConfig{
		"Timeout (1m30s) must be shorter than RetryAfter (1m0s)": {Timeout: 90 * time.Second, RetryAfter: 60 * time.Second},
		"Concurrency (-1)":                 {Concurrency: -1},
		"Prefetch (-2) must be 0 or more":  {Prefetch: -2},
		`Queues lists "a" twice`:           {Queues: []string{"a", "a"}},
		"Queues: ":                         {Queues: []string{"x{y}"}},
		"Backoff and ExponentialBackoff":   {Backoff: []time.Duration{time.Second}, ExponentialBackoff: &runtime.ExponentialBackoff{Base: 1, Max: 2}},
		"Backoff[1] (-1s)":                 {Backoff: []time.Duration{time.Second, -time.Second}},
		"MaxJobs (-2)":                     {MaxJobs: -2},
		"Memory (-1)":                      {Memory: -1},
		"ExponentialBackoff (base 2s, max": {ExponentialBackoff: &runtime.ExponentialBackoff{Base: 2 * time.Second, Max: time.Second}},
	}
	for want, cfg := range cases {
		_, err := runtime.NewWorker(e, runtime.NewRouter(), cfg)
		require.ErrorIs(t, err, runtime.ErrInvalid, want)
		require.ErrorContains(t, err, "WorkerConfig.")
		require.ErrorContains(t, err, want)
	}

	r := runtime.NewRouter()
	runtime.Register(r, "x", func(context.Context, testJob) error { return nil })
	runtime.Register(r, "x", func(context.Context, testJob) error { return nil })
	_, err = runtime.NewWorker(e, r, runtime.WorkerConfig{})
	require.ErrorContains(t, err, `job "x" registered twice`)
}

func TestWorkerEventsInOrder(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			time.Sleep(5 * time.Millisecond)
			return errors.New("always")
		})
		// JobReleased comes once the release is accepted, so with no
		// backoff the next attempt's JobProcessing may come first: the
		// backoff orders them.
		id := b.dispatch(t, job(1, runtime.JobOptions{Tries: 2, Backoff: []time.Duration{50 * time.Millisecond}}))[0]
		b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 2, Name: "ev"})
		require.Equal(t, []runtime.EventKind{
			runtime.JobQueued,
			runtime.JobProcessing, runtime.JobExceptionOccurred, runtime.JobReleased,
			runtime.JobProcessing, runtime.JobExceptionOccurred, runtime.JobFailed,
			runtime.WorkerStopping,
		}, b.log.kinds(""))
		require.NotEmpty(t, b.log.of(runtime.Looping))

		b.log.mu.Lock()
		defer b.log.mu.Unlock()
		attempt := 0
		for _, e := range b.log.events {
			switch e.Kind {
			case runtime.Looping:
				require.Equal(t, "ev", e.Worker)
				continue
			case runtime.WorkerStopping:
				require.Equal(t, "max jobs", e.Reason)
				continue
			case runtime.JobProcessing:
				attempt++
			case runtime.JobExceptionOccurred, runtime.JobFailed:
				require.ErrorContains(t, e.Err, "always", e.Kind)
			}
			require.Equal(t, id, e.ID, e.Kind)
			require.Equal(t, "default", e.Queue, e.Kind)
			require.Equal(t, "test.Job", e.Name, e.Kind)
			if e.Kind != runtime.JobQueued {
				require.Equal(t, "ev", e.Worker, e.Kind)
				require.Equal(t, attempt, e.Attempt, e.Kind)
			}
			if e.Kind == runtime.JobExceptionOccurred {
				require.GreaterOrEqual(t, e.Duration, 5*time.Millisecond)
			}
		}
	})
}

// A context that is done before Run starts is a stop like any other: Run
// returns nil, as it does when the context ends later, and takes no job.
func TestRunWithContextDone(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(context.Context, testJob) error { runs.Add(1); return nil })
		b.dispatch(t, job(1, runtime.JobOptions{}))

		cancelled, cancel := context.WithCancel(b.ctx)
		cancel()
		expired, cancel := context.WithDeadline(b.ctx, time.Now().Add(-time.Second))
		defer cancel()
		for _, ctx := range []context.Context{cancelled, expired} {
			w := b.worker(t, runtime.WorkerConfig{})
			require.NoError(t, w.Run(ctx))
			require.Equal(t, "context done", w.StopReason())
		}
		require.Len(t, b.log.of(runtime.WorkerStopping), 2)
		require.Zero(t, runs.Load())
		require.Equal(t, int64(1), sizes(t, b.bundle, "default").Ready)
	})
}

// Run returns only once its own Redis calls have ended, the BLPOP of its
// doorbell included, so the engine can be closed right after it without
// a call in flight (go-redis then logs "conn state changed by hook to
// CLOSED").
func TestRunEndsItsRedisCalls(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		for _, queues := range [][]string{{"default"}, {"high", "default"}} {
			w := b.worker(t, runtime.WorkerConfig{Queues: queues, Sleep: 5 * time.Second})
			looping := make(chan struct{}, 1)
			w.Subscribe(func(ev runtime.Event) {
				if ev.Kind == runtime.Looping {
					select {
					case looping <- struct{}{}:
					default:
					}
				}
			})
			ctx, cancel := context.WithCancel(b.ctx)
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			<-looping
			time.Sleep(100 * time.Millisecond) // the queues are empty: the worker waits on its doorbell
			cancel()
			require.NoError(t, <-done)
			st := b.rdb.PoolStats()
			require.Equal(t, st.IdleConns, st.TotalConns, "a connection is still in use after Run returned")
		}
		require.NoError(t, b.engine.Close())
	})
}

func TestRestartBroadcast(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		w1, _ := b.start(t, runtime.WorkerConfig{Name: "a"})
		w2, _ := b.start(t, runtime.WorkerConfig{Name: "b"})
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, runtime.NewInspector(b.engine).RestartWorkers(b.ctx))
		eventually(t, func() bool { return len(b.log.of(runtime.WorkerStopping)) == 2 }, "both workers stop")
		require.Equal(t, "restart broadcast", w1.StopReason())
		require.Equal(t, "restart broadcast", w2.StopReason())
	})
}

// A restart key that vanishes, as when Redis restarts without
// persistence, is no broadcast: the worker keeps running, and a
// broadcast made after that still stops it.
func TestRestartKeyLostIsNoBroadcast(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		require.NoError(t, runtime.NewInspector(b.engine).RestartWorkers(b.ctx)) // a broadcast before the worker starts
		w, _ := b.start(t, runtime.WorkerConfig{})
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, b.rdb.Del(b.ctx, b.prefix+":restart").Err())
		time.Sleep(1500 * time.Millisecond) // the worker looks every half second
		require.Empty(t, w.StopReason(), "the worker stopped with no broadcast")

		require.NoError(t, runtime.NewInspector(b.engine).RestartWorkers(b.ctx))
		eventually(t, func() bool { return w.StopReason() == "restart broadcast" }, "a broadcast stops the worker")
	})
}

func TestQueuePause(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs atomic.Int32
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { runs.Add(1); return nil })
		require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "mail"))
		b.dispatch(t, onQueue(1, "mail"), onQueue(2, "default"))
		_, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"mail", "default"}})
		eventually(t, func() bool { return runs.Load() == 1 }, "the default queue runs")
		time.Sleep(200 * time.Millisecond)
		require.Equal(t, int32(1), runs.Load(), "the paused queue does not")
		require.NoError(t, runtime.NewInspector(b.engine).ResumeQueue(b.ctx, "mail"))
		eventually(t, func() bool { return runs.Load() == 2 }, "the resumed queue runs")
		stop()
	})
}

// The child worker runs in a subprocess so it can be signalled and killed.
const childEnv = "JOBGEN_TEST_CHILD_WORKER"

// childJob sleeps for Millis, or until its context ends, and logs its
// start and end to a Redis list.
type childJob struct{ Millis int }

func (childJob) JobName() string                { return "test.Child" }
func (childJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j childJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func runChildWorker() int {
	ctx := context.Background()
	prefix := os.Getenv("CHILD_PREFIX")
	e, err := runtime.Open(ctx, os.Getenv("CHILD_URL"), runtime.EngineConfig{Prefix: prefix})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer e.Close()
	note := func(s string) { e.Client().RPush(ctx, prefix+":childlog", s) }
	r := runtime.NewRouter()
	runtime.Register(r, "test.Child", func(ctx context.Context, j childJob) error {
		note("start")
		select {
		case <-time.After(time.Duration(j.Millis) * time.Millisecond):
			note("done")
			return nil
		case <-ctx.Done():
			note("cancelled")
			return ctx.Err()
		}
	})
	grace, _ := time.ParseDuration(os.Getenv("CHILD_GRACE"))
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{
		Grace: grace, RetryAfter: time.Second, Timeout: 900 * time.Millisecond,
		Sleep: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.MultiWriter(os.Stderr, childLogWriter(ctx, e, prefix)), nil)),
		MonitorEvery: 100 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	// Ready once the fetch loop runs, so the signal handlers are in place:
	// a Go program ignores a SIGUSR2 that arrives before them.
	var ready sync.Once
	w.Subscribe(func(ev runtime.Event) {
		if ev.Kind == runtime.Looping {
			ready.Do(func() { note("ready") })
		}
	})
	if err := w.RunWithSignals(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	note("exit:" + w.StopReason())
	return 0
}

type child struct {
	cmd    *exec.Cmd
	b      wbundle
	exited chan error
}

func startChild(t *testing.T, b wbundle, grace time.Duration) *child {
	t.Helper()
	var url string
	switch c := b.rdb.(type) {
	case *redis.ClusterClient:
		url = "redis+cluster://" + strings.Join(c.Options().Addrs, ",")
	case *redis.Client: // a real or an embedded server, by address
		url = "redis://" + c.Options().Addr
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "CHILD_URL="+url, "CHILD_PREFIX="+b.prefix, "CHILD_GRACE="+grace.String())
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, b: b, exited: make(chan error, 1)}
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	c.waitLog(t, "ready")
	return c
}

func (c *child) log(t *testing.T) []string {
	l, err := c.b.rdb.LRange(c.b.ctx, c.b.prefix+":childlog", 0, -1).Result()
	require.NoError(t, err)
	return l
}

func (c *child) waitLog(t *testing.T, entry string) {
	t.Helper()
	eventually(t, func() bool {
		for _, s := range c.log(t) {
			if s == entry {
				return true
			}
		}
		return false
	}, "child logs "+entry)
}

func (c *child) signal(t *testing.T, s os.Signal) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(s))
}

func (c *child) waitExit(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.exited:
		require.NoError(t, err, "child exits with status 0")
	case <-time.After(15 * time.Second):
		t.Fatal("child did not exit")
	}
}

func dispatchChild(t *testing.T, b wbundle, millis int) {
	t.Helper()
	_, err := runtime.Dispatch(b.ctx, childJob{Millis: millis})
	require.NoError(t, err)
}

func TestSignals(t *testing.T) {
	// The worker names the signal that stopped it.
	for sig, reason := range map[os.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"} {
		t.Run(reason+" lets the running job finish", func(t *testing.T) {
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				c := startChild(t, b, 10*time.Second)
				dispatchChild(t, b, 400)
				c.waitLog(t, "start")
				c.signal(t, sig)
				c.waitExit(t)
				require.Equal(t, []string{"ready", "start", "done", "exit:" + reason}, c.log(t))
				require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
			})
		})
	}
	t.Run("SIGTERM past the grace period releases the job", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			c := startChild(t, b, 200*time.Millisecond)
			dispatchChild(t, b, 60_000)
			c.waitLog(t, "start")
			c.signal(t, syscall.SIGTERM)
			c.waitExit(t)
			require.Equal(t, []string{"ready", "start", "cancelled", "exit:SIGTERM"}, c.log(t))
			require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b.bundle, "default"), "nothing is lost")
		})
	})
	t.Run("SIGUSR2 pauses and SIGCONT resumes", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			c := startChild(t, b, 10*time.Second)
			c.signal(t, syscall.SIGUSR2)
			time.Sleep(200 * time.Millisecond)
			dispatchChild(t, b, 1)
			time.Sleep(300 * time.Millisecond)
			require.Equal(t, []string{"ready"}, c.log(t), "a paused worker takes no job")
			c.signal(t, syscall.SIGCONT)
			c.waitLog(t, "done")
			c.signal(t, syscall.SIGTERM)
			c.waitExit(t)
		})
	})
	t.Run("SIGKILL mid-job: the job runs again after its lease", func(t *testing.T) {
		forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
			c := startChild(t, b, time.Second)
			dispatchChild(t, b, 60_000)
			c.waitLog(t, "start")
			c.signal(t, syscall.SIGKILL)
			<-c.exited
			var attempts []int
			runtime.Register(b.router, "test.Child", func(ctx context.Context, j childJob) error {
				info, _ := runtime.JobInfoFrom(ctx)
				attempts = append(attempts, info.Attempt)
				return nil
			})
			b.runToEnd(t, runtime.WorkerConfig{MaxJobs: 1, Tries: 3})
			require.Equal(t, []int{2}, attempts)
			require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
		})
	})
}

// Stats.Returned counts the jobs a stop gives back unfinished: the one
// still running when the grace ran out, and the one prefetched behind it.
func TestStatsCountJobsReturnedAtStop(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		started := make(chan struct{}, 2)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, _ testJob) error {
			started <- struct{}{}
			<-ctx.Done()
			return context.Cause(ctx)
		})
		b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{}))
		w, stop := b.start(t, runtime.WorkerConfig{Concurrency: 1, Prefetch: 1, Grace: 50 * time.Millisecond})
		<-started
		eventually(t, func() bool { return sizes(t, b.bundle, "default").Reserved == 2 }, "both jobs reserved")
		stop()
		require.Equal(t, runtime.WorkerStats{Returned: 2}, w.Stats())
		require.Equal(t, runtime.Sizes{Ready: 2}, sizes(t, b.bundle, "default"))
	})
}
