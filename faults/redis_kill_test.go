package faults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
)

// TestRedisKill9 kills Redis with SIGKILL every 15 s (4 s in CI) while
// jobs are dispatched and run, and starts it again from its append-only
// file, written with appendfsync always. No acknowledged dispatch may be
// lost, and every worker runs a job again within 5 s of Redis coming
// back.
func TestRedisKill9(t *testing.T) {
	every := harness.Scale(4*time.Second, 15*time.Second)
	kills := harness.Scale(2, 8)
	b := setup(t, "--appendonly", "yes", "--appendfsync", "always")
	f := b.fleet(t, nil)
	f.Start(3)

	ctx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.disp.Stream(ctx, 4*time.Millisecond, func() faultworker.Task { return faultworker.Task{Millis: 10} })
	}()
	var worst time.Duration
	for range kills {
		time.Sleep(every)
		b.redis.Kill()
		time.Sleep(500 * time.Millisecond)
		b.redis.Start()
		up := time.Now()
		for slot := range 3 {
			d := firstRunAfter(t, f.Proc(slot), up, 30*time.Second)
			worst = max(worst, d)
		}
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	t.Logf("figures: %d Redis kills, every %v; %d dispatches acknowledged, %d refused; lost %d; duplicates %d; slowest worker back at work %v after Redis restarted",
		kills, every, o.Acked, len(b.disp.Errors()), len(o.Lost), o.Duplicates, worst.Round(10*time.Millisecond))
	require.LessOrEqual(t, worst, 5*time.Second, "workers reconnect within 5s")
	require.Empty(t, f.Deaths())
}

// firstRunAfter waits until p starts a job after t0, and returns how long
// after t0 that was.
func firstRunAfter(t *testing.T, p *harness.Proc, t0 time.Time, timeout time.Duration) time.Duration {
	t.Helper()
	for time.Since(t0) < timeout {
		recs, err := faultworker.ReadLedger(p.Ledger)
		require.NoError(t, err)
		for i := len(recs) - 1; i >= 0; i-- {
			if r := recs[i]; r.Kind == 'S' && !r.At.Before(t0.Truncate(time.Millisecond)) {
				return r.At.Sub(t0)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("worker %s ran nothing within %v of Redis coming back", p.Name, timeout)
	return 0
}
