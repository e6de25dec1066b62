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

// TestScriptFlush empties Redis's script cache every 500 ms while jobs
// are dispatched and run. Every script call that finds its script gone
// sends it again, so no operation fails: no dispatch error, no error in
// any worker's log, nothing lost, nothing run twice.
func TestScriptFlush(t *testing.T) {
	run := harness.Scale(6*time.Second, 60*time.Second)
	b := setup(t)
	f := b.fleet(t, nil)
	f.Start(3)

	ctx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		b.disp.Stream(ctx, 2*time.Millisecond, func() faultworker.Task { return faultworker.Task{Millis: 5} })
	}()
	flushes := 0
	go func() {
		defer wg.Done()
		rdb := b.redis.Client()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := rdb.ScriptFlush(ctx).Err(); err == nil {
					flushes++
				}
			}
		}
	}()
	time.Sleep(run)
	stop()
	wg.Wait()
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	errs := f.LogLines(`"level":"ERROR"`)
	t.Logf("figures: %d SCRIPT FLUSHes in %v; %d jobs; failed dispatches %d, worker errors %d, lost %d, duplicates %d",
		flushes, run, o.Acked, len(b.disp.Errors()), len(errs), len(o.Lost), o.Duplicates)
	require.Empty(t, b.disp.Errors(), "no dispatch fails")
	require.Empty(t, errs, "no worker operation fails")
	require.Zero(t, o.Duplicates)
	require.Zero(t, o.Failed)
}
