package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// With weights 6:3:1 and all three queues full, a worker takes 60%, 30%
// and 10% of its jobs from them, within 5 points; with strict order, the
// first queue only.
func TestWeightedQueuesShareUnderLoad(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		queues := []string{"critical", "default", "low"}
		const full, take = 20_000, 30_000
		body, err := runtime.Encode(weightedJob{})
		require.NoError(t, err)
		for _, q := range queues {
			out := make([]runtime.Outgoing, full)
			for i := range out {
				out[i] = runtime.Outgoing{Envelope: env(q, "test.Weighted", string(body))}
			}
			require.NoError(t, b.engine.PushMany(b.ctx, out))
		}
		run := func(weights map[string]int, n int) map[string]int {
			var mu sync.Mutex
			got := map[string]int{}
			r := runtime.NewRouter()
			runtime.Register(r, "test.Weighted", func(ctx context.Context, _ weightedJob) error {
				info, _ := runtime.JobInfoFrom(ctx)
				mu.Lock()
				got[info.Queue]++
				mu.Unlock()
				return nil
			})
			w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: queues, Weights: weights,
				Concurrency: 10, MaxJobs: n, Sleep: 20 * time.Millisecond, Logger: quiet})
			require.NoError(t, err)
			require.NoError(t, w.Run(b.ctx))
			return got
		}
		got := run(map[string]int{"critical": 6, "default": 3, "low": 1}, take)
		total := got["critical"] + got["default"] + got["low"]
		require.Equal(t, take, total)
		for q, want := range map[string]float64{"critical": 60, "default": 30, "low": 10} {
			share := 100 * float64(got[q]) / float64(total)
			require.InDelta(t, want, share, 5, "share of %s: %v", q, got)
		}
		strict := run(nil, 1000)
		require.Equal(t, map[string]int{"critical": 1000}, strict, "strict order takes the first queue while it has jobs")
	})
}

// weightedJob is an empty job.
type weightedJob struct{}

func TestWeightsAreChecked(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0], runtime.EngineConfig{})
	for _, tc := range []struct {
		weights map[string]int
		want    string
	}{
		{map[string]int{"a": 2}, `Weights["b"] (0) must be at least 1`},
		{map[string]int{"a": 1, "b": 1, "c": 1}, `Weights names "c", which is not one of Queues`},
		{map[string]int{"a": 1, "b": 0}, `Weights["b"] (0) must be at least 1`},
	} {
		_, err := runtime.NewWorker(b.engine, runtime.NewRouter(), runtime.WorkerConfig{Queues: []string{"a", "b"}, Weights: tc.weights})
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, tc.want)
	}
}
