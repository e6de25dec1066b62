package faults_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
)

// SoakEnv sets the length of TestSoak, as a Go duration; the long build
// runs it for 30 minutes by default.
const soakEnv = "JOBGEN_FAULTS_SOAK"

// TestSoak runs two workers at 200 jobs a second for 30 minutes (or
// JOBGEN_FAULTS_SOAK), sampling each worker's live heap and goroutine
// count every 10 s. Neither may grow: the median heap of the last fifth
// of the run stays within 25% (and 4 MB) of the second fifth's, and the
// goroutine count within 5. Nothing is lost. It runs only in the long
// build or with JOBGEN_FAULTS_SOAK set.
func TestSoak(t *testing.T) {
	length := 30 * time.Minute
	if s := os.Getenv(soakEnv); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, soakEnv)
		length = d
	} else if !harness.Long {
		t.Skip("a soak runs in the long build (-tags faults_long) or with " + soakEnv + "=30m")
	}
	sample := min(10*time.Second, length/30)
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) { c.Stats = sample })
	f.Start(2)

	ctx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	for range 2 { // two streams of 100 jobs a second
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.disp.Stream(ctx, 10*time.Millisecond, func() faultworker.Task { return faultworker.Task{Millis: 2} })
		}()
	}
	time.Sleep(length)
	stop()
	wg.Wait()
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)
	o := b.check(t, f)

	byWorker := map[int][]faultworker.Record{}
	for _, r := range f.Records() {
		if r.Kind == 'M' {
			byWorker[r.PID] = append(byWorker[r.PID], r)
		}
	}
	require.Len(t, byWorker, 2)
	for pid, ms := range byWorker {
		require.GreaterOrEqual(t, len(ms), 10, "enough samples")
		fifth := len(ms) / 5
		early, late := ms[fifth:2*fifth], ms[len(ms)-fifth:]
		h0, h1 := median(early, func(r faultworker.Record) float64 { return float64(r.Heap) }), median(late, func(r faultworker.Record) float64 { return float64(r.Heap) })
		g0, g1 := median(early, func(r faultworker.Record) float64 { return float64(r.Goroutines) }), median(late, func(r faultworker.Record) float64 { return float64(r.Goroutines) })
		t.Logf("figures: worker %d over %v at %.0f jobs/s: heap %.1f MB -> %.1f MB, goroutines %.0f -> %.0f (%d samples)",
			pid, length, float64(o.Acked)/length.Seconds(), h0/(1<<20), h1/(1<<20), g0, g1, len(ms))
		require.LessOrEqual(t, h1, max(h0*1.25, h0+4<<20), "worker %d's heap stays flat", pid)
		require.LessOrEqual(t, g1, g0+5, "worker %d's goroutine count stays flat", pid)
	}
}

func median(rs []faultworker.Record, v func(faultworker.Record) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = v(r)
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}
