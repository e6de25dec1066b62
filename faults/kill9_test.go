package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestKill9 kills one of four workers with SIGKILL every 2 s while the
// jobs run, and starts a new one in its place. Nothing acknowledged may
// be lost; a job may run twice only if a killed worker held it; and the
// queue drains within RetryAfter + 15 s of the last kill.
func TestKill9(t *testing.T) {
	t.Run("prefetch 0", func(t *testing.T) { kill9(t, 0) })
	// Prefetched jobs wait for a slot held (WorkerConfig.Prefetch): a
	// killed worker's costs no attempt.
	t.Run("prefetch 16", func(t *testing.T) { kill9(t, 16) })
}

func kill9(t *testing.T, prefetch int) {
	jobs := harness.Scale(10_000, 50_000)
	every := harness.Scale(time.Second, 2*time.Second)
	b := setup(t)
	retryAfter := 2 * time.Second
	f := b.fleet(t, func(c *faultworker.Config) {
		c.Concurrency, c.Prefetch = 16, prefetch
		c.RetryAfter, c.Timeout = retryAfter, time.Second
	})
	b.disp.PushN(b.ctx, jobs, func(i int) faultworker.Task { return faultworker.Task{Millis: 10 + i%40} })
	f.Start(4)

	var kills, inFlight int
	var lastKill time.Time
	for slot := 0; ; slot = (slot + 1) % 4 {
		time.Sleep(every)
		s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
		require.NoError(t, err)
		if s.Ready == 0 {
			break
		}
		p := f.Kill(slot)
		lastKill = time.Now()
		kills++
		inFlight += heldBy(t, b, p)
		f.Replace(slot)
	}
	require.NotZero(t, kills, "the jobs ran out before the first kill: raise the count")
	drained := harness.Drain(t, b.engine, queue, retryAfter+30*time.Second)
	sinceKill := time.Since(lastKill)
	f.StopAll(10 * time.Second)

	o := b.check(t, f)
	unstarted := harness.GroupRuns(f.Records()).Unstarted()
	t.Logf("figures: %d jobs, prefetch %d, %d kills, %d jobs in flight at the kills, %d duplicates, %d attempts burned unstarted, drained %v after the last kill (bound %v)",
		jobs, prefetch, kills, inFlight, o.Duplicates, unstarted, sinceKill.Round(100*time.Millisecond), retryAfter+15*time.Second)
	require.LessOrEqual(t, o.Duplicates, inFlight, "duplicates only of jobs a killed worker held")
	require.Zero(t, o.Failed, "no job failed")
	require.LessOrEqual(t, sinceKill, retryAfter+15*time.Second, "drained within RetryAfter + 15s of the last kill (drain wait %v)", drained)
	require.Empty(t, f.Deaths(), "no worker died but those killed")
}

// heldBy counts the jobs the dead worker p held at its death: those it
// started that are still reserved. Only these can run twice because of
// the kill. (A job p lost to another worker before its death would be
// counted too, which only loosens the bound.)
func heldBy(t *testing.T, b bundle, p *harness.Proc) int { return reservedWith(t, b, p, 'S') }

// reservedWith counts the jobs still reserved that p's ledger has a
// record of kind for: S, started; F, finished.
func reservedWith(t *testing.T, b bundle, p *harness.Proc, kind byte) int {
	t.Helper()
	recs, err := faultworker.ReadLedger(p.Ledger)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Kind == kind {
			seen[r.ID] = true
		}
	}
	reserved, err := b.engine.Client().ZRange(b.ctx, harness.Keys("faults", queue).Reserved, 0, -1).Result()
	require.NoError(t, err)
	n := 0
	for _, id := range reserved {
		if seen[id] {
			n++
		}
	}
	return n
}

// TestKill9FailsOnlyStartedJobs kills a worker with SIGKILL while it
// runs jobs and holds prefetched ones, with Tries 1. The jobs it was
// running have had their one try and fail, as in Laravel; the ones it had
// only prefetched never ran, and must run now rather than fail.
func TestKill9FailsOnlyStartedJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.Concurrency, c.Prefetch, c.Tries = 4, 4, 1
		c.RetryAfter, c.Timeout = time.Second, 900*time.Millisecond
	})
	b.disp.PushN(b.ctx, 40, func(int) faultworker.Task { return faultworker.Task{Millis: 300} })
	f.Start(1)
	waitRecord(t, f.Proc(0).Ledger, 'S', 1)
	time.Sleep(50 * time.Millisecond)
	f.Kill(0)
	f.Replace(0)
	harness.Drain(t, b.engine, queue, 30*time.Second)
	f.StopAll(10 * time.Second)
	o := b.check(t, f)
	runs := harness.GroupRuns(f.Records())
	failed, err := harness.FailedIDs(b.ctx, b.engine, queue)
	require.NoError(t, err)
	unrun := 0
	for id := range failed {
		if runs[id] == nil {
			unrun++
		}
	}
	t.Logf("figures: %d failed after the kill, %d of them never ran", o.Failed, unrun)
	require.Zero(t, unrun, "no job fails without having run")
}
