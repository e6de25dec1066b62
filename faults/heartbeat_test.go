package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestHeartbeatLongJobs runs jobs three times as long as RetryAfter (the
// lease). The heartbeat renews their leases, so no job is handed to a
// second worker: each runs exactly once, as attempt 1.
func TestHeartbeatLongJobs(t *testing.T) {
	// A 2s lease leaves the heartbeat (every 667ms) room for a stall of
	// over a second on a loaded machine before a lease can run out.
	const retryAfter = 2 * time.Second
	jobs := harness.Scale(16, 200)
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.RetryAfter, c.Timeout = retryAfter, retryAfter*9/10
		c.Concurrency = 8
	})
	b.disp.PushN(b.ctx, jobs, func(int) faultworker.Task {
		// The job's own timeout lifts the worker's, which must stay under
		// RetryAfter.
		return faultworker.Task{Millis: int(3 * retryAfter / time.Millisecond), Opts: runtime.JobOptions{Timeout: 10 * retryAfter}}
	})
	f.Start(2)
	harness.Drain(t, b.engine, queue, time.Duration(jobs/16+2)*4*retryAfter+30*time.Second)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	t.Logf("figures: %d jobs of %v with RetryAfter %v: %d runs, %d duplicates", jobs, 3*retryAfter, retryAfter, o.Runs, o.Duplicates)
	require.Zero(t, o.Duplicates)
	require.Equal(t, jobs, o.Runs, "each job runs once")
	for id, j := range harness.GroupRuns(f.Records()) {
		require.Equal(t, 1, j.Starts[0].Attempt, "job %s runs as attempt 1", id)
	}
	require.Empty(t, f.LogLines("lease"), "no lease is lost")
}
