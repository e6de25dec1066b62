package faults_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
)

// TestSigtermChurn stops workers with SIGTERM twenty times while jobs
// run, starting a new one after each stop. A graceful stop lets running
// jobs finish and flushes their acks: nothing is lost and nothing runs
// twice.
func TestSigtermChurn(t *testing.T) {
	const stops = 20
	jobs := harness.Scale(6000, 30_000)
	every := harness.Scale(300*time.Millisecond, time.Second)
	b := setup(t)
	f := b.fleet(t, nil)
	b.disp.PushN(b.ctx, jobs, func(i int) faultworker.Task { return faultworker.Task{Millis: 20 + i%40} })
	f.Start(3)

	readyAtStops := 0
	for i := range stops {
		time.Sleep(every)
		s, err := b.engine.Sizes(b.ctx, queue)
		require.NoError(t, err)
		if s.Ready > 0 {
			readyAtStops++
		}
		slot := i % 3
		p := f.Signal(slot, syscall.SIGTERM)
		f.Replace(slot) // while the old one finishes its jobs
		require.True(t, p.Wait(15*time.Second), "worker %s stops within 15s of SIGTERM", p.Name)
		require.True(t, p.State().Success(), "worker %s exits with status 0: %v", p.Name, p.State())
	}
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	t.Logf("figures: %d jobs, %d SIGTERM stops (%d with jobs still ready), %d duplicates, %d runs cut short",
		jobs, stops, readyAtStops, o.Duplicates, o.Runs-o.Completed)
	require.Zero(t, o.Duplicates, "no job runs twice")
	require.Zero(t, o.Failed)
	require.Equal(t, o.Runs, o.Completed, "every run finishes: the grace period is long enough")
	require.Empty(t, f.Deaths())
}
