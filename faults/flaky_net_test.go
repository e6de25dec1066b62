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

// TestFlakyNetwork puts a proxy between Redis and everyone else (the
// dispatcher and the workers) that delays every chunk by 1 ms and resets
// the connection on 1% of them, sometimes after Redis has run the
// command, so that its reply is lost. No acknowledged job is lost.
func TestFlakyNetwork(t *testing.T) {
	run := harness.Scale(8*time.Second, 120*time.Second)
	srv := harness.StartRedis(t)
	proxy := harness.StartProxy(t, srv.Addr(), time.Millisecond, 0.01)
	b := setupOn(t, srv, proxy.URL())
	direct := setupOn(t, srv, srv.URL()) // the checker's view, not through the proxy
	f := harness.NewFleet(t, b.workerConfig(proxy.URL()))
	f.Start(3)

	ctx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.disp.Stream(ctx, 3*time.Millisecond, func() faultworker.Task { return faultworker.Task{Millis: 5} })
	}()
	time.Sleep(run)
	stop()
	wg.Wait()
	harness.Drain(t, direct.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)

	o, err := harness.Check(b.ctx, direct.engine, queue, b.disp.Acked(), f.Records())
	require.NoError(t, err)
	t.Logf("outcome: %v", o)
	harness.RequireClean(t, o)
	failed, err := harness.FailedIDs(b.ctx, direct.engine, queue)
	require.NoError(t, err)
	t.Logf("figures: %v through the proxy, %d connections, %d reset; %d dispatches acknowledged, %d refused, %d ran though refused; lost %d, duplicates %d, failed %d; worker errors %d",
		run, proxy.Conns(), proxy.Resets(), o.Acked, len(b.disp.Errors()), o.Unacked, len(o.Lost), o.Duplicates, len(failed), len(f.LogLines(`"level":"ERROR"`)))
	// A job first run as attempt 2 or later was reserved by a reserve
	// whose reply was lost (TestRetriedReserve); a job run twice as
	// attempt 1 was pushed again by a retried push (TestRetriedPush).
	phantom, twice := 0, 0
	for _, j := range harness.GroupRuns(f.Records()) {
		first, ones := j.Starts[0].Attempt, 0
		for _, st := range j.Starts {
			first = min(first, st.Attempt)
			if st.Attempt == 1 {
				ones++
			}
		}
		if first > 1 {
			phantom++
		}
		if ones > 1 {
			twice++
		}
	}
	warns := f.LogLines(`"level":"WARN"`)
	t.Logf("figures: %d jobs first run as attempt > 1, %d jobs run twice as attempt 1; %d worker warnings", phantom, twice, len(warns))
	require.NotZero(t, proxy.Resets(), "the proxy reset connections")
	require.Empty(t, f.Deaths())
}
