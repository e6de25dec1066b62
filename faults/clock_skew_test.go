package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestClockSkew runs three workers whose clocks (WorkerConfig.Clock) are
// 30 s behind, right and 30 s ahead, on delayed jobs and on jobs longer
// than the lease. Due times and leases are kept on the Redis clock, so no
// job runs before it is due and none runs twice.
func TestClockSkew(t *testing.T) {
	jobs := harness.Scale(600, 6000)
	b := setup(t)
	skews := []time.Duration{-30 * time.Second, 0, 30 * time.Second}
	fleets := make([]*harness.Fleet, len(skews))
	for i, skew := range skews {
		fleets[i] = b.fleet(t, func(c *faultworker.Config) {
			c.Skew = skew
			c.RetryAfter, c.Timeout = 2*time.Second, 1900*time.Millisecond
		})
		fleets[i].Start(1)
	}
	// Each push is due no sooner than the moment before the call plus
	// its delay.
	earliest := map[string]time.Time{}
	for i := range jobs {
		delay := time.Duration(i%30) * 100 * time.Millisecond
		task := faultworker.Task{Millis: 5, Opts: runtime.JobOptions{Delay: delay, Timeout: 10 * time.Second}}
		if i%50 == 0 {
			task.Millis = 5000 // past the lease: the heartbeat must hold it
		}
		before := time.Now().Truncate(time.Millisecond)
		ids, err := b.disp.Push(b.ctx, task)
		require.NoError(t, err)
		earliest[ids[0]] = before.Add(delay)
	}
	harness.Drain(t, b.engine, queue, time.Minute)
	var all []faultworker.Record
	for _, f := range fleets {
		f.StopAll(15 * time.Second)
		all = append(all, f.Records()...)
	}

	o, err := harness.Check(b.ctx, b.engine, queue, b.disp.Acked(), all)
	require.NoError(t, err)
	t.Logf("outcome: %v", o)
	harness.RequireClean(t, o)
	early := 0
	var margin time.Duration = time.Hour
	for _, r := range all {
		if r.Kind != 'S' {
			continue
		}
		d := r.At.Sub(earliest[r.ID])
		margin = min(margin, d)
		if d < 0 {
			early++
			t.Errorf("job %s (seq %d) ran %v before it was due", r.ID, r.Seq, -d)
		}
	}
	t.Logf("figures: %d jobs on workers skewed %v: %d ran early (closest %v after due), %d duplicates", jobs, skews, early, margin, o.Duplicates)
	require.Zero(t, o.Duplicates)
}
