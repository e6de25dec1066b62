package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// The acks of a queue that keeps finished jobs count each first attempt's
// wait, from ready to start, beside its runtime, and JobHistory reads
// them as percentiles; a retry's wait is not known and not counted.
func TestJobHistoryCountsWaits(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"waits": {}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			if info, _ := runtime.JobInfoFrom(ctx); j.N < 0 && info.Attempt == 1 {
				return errors.New("first attempt fails")
			}
			return nil
		})
		retry := runtime.JobOptions{Queue: "waits", Tries: 3, Backoff: []time.Duration{time.Millisecond}}
		b.dispatch(t, onQueue(1, "waits"), onQueue(2, "waits"), onQueue(3, "waits"), testJob{N: -1, opts: retry})
		// The jobs wait at least this long, ready, before a worker runs.
		const least = 300 * time.Millisecond
		time.Sleep(least)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"waits"}, StopWhenEmpty: true})
		hist, err := runtime.NewInspector(b.engine).JobHistory(b.ctx, "waits", 2)
		require.NoError(t, err)
		require.Len(t, hist, 1)
		var runs, waited int64
		var p50 time.Duration
		for _, s := range hist[0].Slots {
			runs, waited = runs+s.Jobs, waited+s.Wait.Jobs
			if s.Wait.Jobs > 0 {
				p50 = max(p50, s.Wait.P50)
				require.GreaterOrEqual(t, s.Wait.P95, s.Wait.P50)
				require.Zero(t, s.Wait.PerMinute)
			}
		}
		require.Equal(t, int64(4), runs)
		require.Equal(t, int64(3), waited, "the retry's wait is not known")
		qh, err := runtime.NewInspector(b.engine).QueueHistory(b.ctx, "waits", 2)
		require.NoError(t, err)
		require.Equal(t, hist, qh.Classes)
		runs, waited = 0, 0
		for _, s := range qh.All.Slots {
			runs, waited = runs+s.Jobs, waited+s.Wait.Jobs
		}
		require.Equal(t, int64(4), runs, "the queue's, every class together")
		require.Equal(t, int64(3), waited)
		// a bucket's middle is within about 10% of the wait
		require.GreaterOrEqual(t, p50, least*85/100)
	})
}

// A push stamps a delayed job with its due time, the start of its wait;
// a job pushed ready has no such header.
func TestDelayedPushCarriesItsDueTime(t *testing.T) {
	forEachFinishedBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle) {
		ids := b.dispatch(t, testJob{N: 1, opts: runtime.JobOptions{Queue: "due", Delay: time.Hour}}, onQueue(2, "due"))
		ins := runtime.NewInspector(b.engine)
		for k, id := range ids {
			j, ok, err := ins.FindJob(b.ctx, "due", id)
			require.NoError(t, err)
			require.True(t, ok)
			env, err := runtime.DecodeEnvelope("due", id, j.Payload)
			require.NoError(t, err)
			v, has := env.Headers[runtime.DueHeader]
			if k == 1 {
				require.False(t, has)
				continue
			}
			ms, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			require.Equal(t, env.DispatchedAt+time.Hour.Milliseconds(), ms)
		}
	})
}

// A job that succeeded after attempts that failed keeps their last 3
// errors in its record of finished jobs; one that succeeded at once
// keeps none.
func TestFinishedRecordKeepsEarlierErrors(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"errs": {}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			if info, _ := runtime.JobInfoFrom(ctx); info.Attempt <= j.N {
				return errors.New("attempt " + strconv.Itoa(info.Attempt) + " fails \x1e with a separator")
			}
			return nil
		})
		o := runtime.JobOptions{Queue: "errs", Tries: 6, Backoff: []time.Duration{time.Millisecond}}
		ids := b.dispatch(t, testJob{N: 4, opts: o}, testJob{N: 0, opts: o}, testJob{N: 1, opts: o})
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"errs"}, StopWhenEmpty: true})
		ins := runtime.NewInspector(b.engine)
		for k, want := range [][]int{{2, 3, 4}, nil, {1}} {
			tries := []int{5, 1, 2}[k]
			got, _, err := ins.FinishedJobs(b.ctx, "errs", runtime.FinishedQuery{ID: ids[k]})
			require.NoError(t, err)
			require.Len(t, got, 1)
			var attempts []int
			for _, e := range got[0].AttemptErrors {
				attempts = append(attempts, e.Attempt)
				require.Equal(t, "attempt "+strconv.Itoa(e.Attempt)+" fails   with a separator", e.Error)
				require.False(t, e.At.IsZero())
			}
			require.Equal(t, want, attempts, "job %d", k)
			require.Equal(t, tries, got[0].Attempts)
		}
		// the errors hash keeps nothing of a finished job
		for _, id := range ids {
			_, ok, err := ins.FindJob(b.ctx, "errs", id)
			require.NoError(t, err)
			require.False(t, ok)
		}
	})
}
