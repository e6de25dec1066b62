package jobprom_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// step is a hand-written job, as generated code would write it.
type step struct {
	N    int
	opts runtime.JobOptions
}

func (s step) JobName() string                { return "test.Step" }
func (s step) JobOptions() runtime.JobOptions { return s.opts }
func (s step) EncodeJob() ([]byte, error)     { return runtime.Encode(s) }

type bundle struct {
	ctx    context.Context
	engine *runtime.Engine
	router *runtime.Router
	m      *jobprom.Metrics

	mu  sync.Mutex
	ids map[int]string
}

func forEachBackend(t *testing.T, fn func(t *testing.T, b *bundle)) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })
			b := &bundle{ctx: runtime.WithDispatcher(ctx, e), engine: e, router: runtime.NewRouter(), m: jobprom.New(jobprom.Config{}), ids: map[int]string{}}
			e.UseDispatch(b.m.Dispatch)
			fn(t, b)
		})
	}
}

func (b *bundle) handle(fn func(ctx context.Context, s step, info runtime.JobInfo) error) {
	runtime.Register(b.router, "test.Step", func(ctx context.Context, s step) error {
		info, _ := runtime.JobInfoFrom(ctx)
		b.mu.Lock()
		b.ids[s.N] = info.ID
		b.mu.Unlock()
		return fn(ctx, s, info)
	})
}

func (b *bundle) drain(t *testing.T) {
	t.Helper()
	cfg := runtime.WorkerConfig{StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Name: "w1", Queues: []string{"default", "chain"},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.Middleware = append(cfg.Middleware, b.m.Middleware())
	w, err := runtime.NewWorker(b.engine, b.router, cfg)
	require.NoError(t, err)
	b.m.Attach(w)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, w.Run(ctx))
	require.NoError(t, ctx.Err(), "worker did not stop by itself")
}

// TestCounters: a chain of three, a retry, a release, a timeout and a
// failure for good are counted exactly, by queue and job name.
func TestCounters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error {
			switch {
			case info.Attempt > 1:
				return nil
			case s.N == 1:
				return context.DeadlineExceeded // an error: retried
			case s.N == 2:
				return runtime.ReleaseRequest(0)
			case s.N == 3:
				<-ctx.Done()
				return ctx.Err()
			case s.N == 4:
				return context.Canceled // one try: fails for good
			}
			return nil
		})
		two := runtime.JobOptions{Tries: 2}
		_, err := runtime.Chain(step{N: 10}, step{N: 11}, step{N: 12}).OnQueue("chain").Dispatch(b.ctx)
		require.NoError(t, err)
		for _, s := range []step{{N: 1, opts: two}, {N: 2, opts: two}, {N: 3, opts: runtime.JobOptions{Tries: 2, Timeout: 100 * time.Millisecond}}, {N: 4}} {
			_, err := runtime.Dispatch(b.ctx, s)
			require.NoError(t, err)
		}
		b.drain(t)

		want := `
# HELP jobgen_jobs_dispatched_total Jobs pushed to a queue.
# TYPE jobgen_jobs_dispatched_total counter
jobgen_jobs_dispatched_total{job="test.Step",queue="chain"} 3
jobgen_jobs_dispatched_total{job="test.Step",queue="default"} 4
# HELP jobgen_jobs_failed_total Jobs that failed for good and went to the failed store.
# TYPE jobgen_jobs_failed_total counter
jobgen_jobs_failed_total{job="test.Step",queue="default"} 1
# HELP jobgen_jobs_processed_total Attempts whose handler succeeded.
# TYPE jobgen_jobs_processed_total counter
jobgen_jobs_processed_total{job="test.Step",queue="chain"} 3
jobgen_jobs_processed_total{job="test.Step",queue="default"} 3
# HELP jobgen_jobs_released_total Jobs released by their handler or middleware, or given back at a stop.
# TYPE jobgen_jobs_released_total counter
jobgen_jobs_released_total{job="test.Step",queue="default"} 1
# HELP jobgen_jobs_retried_total Jobs released for another attempt after an error or a timeout.
# TYPE jobgen_jobs_retried_total counter
jobgen_jobs_retried_total{job="test.Step",queue="default"} 2
# HELP jobgen_jobs_timed_out_total Attempts that ran past their timeout.
# TYPE jobgen_jobs_timed_out_total counter
jobgen_jobs_timed_out_total{job="test.Step",queue="default"} 1
# HELP jobgen_worker_busy_slots Handlers a worker is running now.
# TYPE jobgen_worker_busy_slots gauge
jobgen_worker_busy_slots{worker="w1"} 0
`
		require.NoError(t, testutil.CollectAndCompare(b.m, strings.NewReader(want),
			"jobgen_jobs_dispatched_total", "jobgen_jobs_processed_total", "jobgen_jobs_failed_total", "jobgen_jobs_released_total",
			"jobgen_jobs_retried_total", "jobgen_jobs_timed_out_total", "jobgen_worker_busy_slots"))
		// Every attempt ran its handler once (3 chain links, 4 jobs, 3
		// second attempts) and was picked up from a known ready time.
		require.Equal(t, uint64(10), histogramCount(t, b.m, "jobgen_job_duration_seconds"))
		require.Equal(t, uint64(10), histogramCount(t, b.m, "jobgen_job_pickup_latency_seconds"))
	})
}

// TestPickupFromDueTime: a delayed job's pickup latency counts from its
// due time, its dispatch time plus its delay, not from its dispatch.
func TestPickupFromDueTime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		var sinceDispatch time.Duration
		b.handle(func(_ context.Context, _ step, info runtime.JobInfo) error {
			sinceDispatch = time.Since(info.DispatchedAt)
			return nil
		})
		_, err := runtime.NewPendingDispatch(step{N: 1}).Delay(300 * time.Millisecond).Dispatch(b.ctx)
		require.NoError(t, err)
		cfg := runtime.WorkerConfig{MaxJobs: 1, Sleep: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		b.m.Instrument(b.engine, &cfg)
		w, err := runtime.NewWorker(b.engine, b.router, cfg)
		require.NoError(t, err)
		b.m.Attach(w)
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		require.NoError(t, w.Run(ctx))
		require.Equal(t, uint64(1), histogramCount(t, b.m, "jobgen_job_pickup_latency_seconds"))
		require.InDelta(t, (sinceDispatch - 300*time.Millisecond).Seconds(), histogramSum(t, b.m, "jobgen_job_pickup_latency_seconds"), 0.005)
	})
}

// TestQueueCollector: one scrape reports every queue's jobs by state and
// its paused flag.
func TestQueueCollector(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		for _, s := range []step{{N: 1}, {N: 2, opts: runtime.JobOptions{Queue: "low"}}} {
			_, err := runtime.Dispatch(b.ctx, s)
			require.NoError(t, err)
		}
		_, err := runtime.NewPendingDispatch(step{N: 3}).Delay(time.Hour).OnQueue("low").Dispatch(b.ctx)
		require.NoError(t, err)
		require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "low"))
		want := `
# HELP jobgen_queue_jobs Jobs of a queue in each state: ready, delayed, reserved, failed.
# TYPE jobgen_queue_jobs gauge
jobgen_queue_jobs{queue="default",state="delayed"} 0
jobgen_queue_jobs{queue="default",state="failed"} 0
jobgen_queue_jobs{queue="default",state="ready"} 1
jobgen_queue_jobs{queue="default",state="reserved"} 0
jobgen_queue_jobs{queue="low",state="delayed"} 1
jobgen_queue_jobs{queue="low",state="failed"} 0
jobgen_queue_jobs{queue="low",state="ready"} 1
jobgen_queue_jobs{queue="low",state="reserved"} 0
# HELP jobgen_queue_paused 1 while the queue is paused.
# TYPE jobgen_queue_paused gauge
jobgen_queue_paused{queue="default"} 0
jobgen_queue_paused{queue="low"} 1
`
		// The waits change from one scrape to the next: wait_test.go
		// checks them.
		require.NoError(t, testutil.CollectAndCompare(jobprom.NewQueueCollector(b.engine, nil), strings.NewReader(want),
			"jobgen_queue_jobs", "jobgen_queue_paused"))
	})
}

func histogram(t *testing.T, c prometheus.Collector, name string) (count uint64, sum float64) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			count += m.GetHistogram().GetSampleCount()
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return count, sum
}

func histogramCount(t *testing.T, c prometheus.Collector, name string) uint64 {
	n, _ := histogram(t, c, name)
	return n
}

func histogramSum(t *testing.T, c prometheus.Collector, name string) float64 {
	_, s := histogram(t, c, name)
	return s
}

// TestResultSizes: each stored result's size is observed, by queue and
// job; a job without a result is not.
func TestResultSizes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		b.handle(func(ctx context.Context, s step, _ runtime.JobInfo) error {
			if s.N == 0 {
				return nil
			}
			return runtime.RecordResult(ctx, strings.Repeat("r", s.N))
		})
		for _, n := range []int{0, 10, 100} {
			_, err := runtime.Dispatch(b.ctx, step{N: n})
			require.NoError(t, err)
		}
		b.drain(t)
		require.Equal(t, uint64(2), histogramCount(t, b.m, "jobgen_job_result_bytes"))
		// msgpack adds one byte of header to 10 bytes, two to 100.
		require.Equal(t, float64(11+102), histogramSum(t, b.m, "jobgen_job_result_bytes"))
	})
}
