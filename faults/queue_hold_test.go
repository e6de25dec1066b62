package faults_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestHoldQueueAcrossProcesses runs two worker processes with one try
// per job. A handler in one of them holds the queue (runtime.HoldQueue)
// for 3 seconds: by the handlers' own begin times, no job pushed once
// the hold is on begins, in either process, before the hold ends by the
// Redis clock; then they all run, and the held job runs again at
// attempt 1 rather than failing.
func TestHoldQueueAcrossProcesses(t *testing.T) {
	t.Parallel()
	const jobs = 300
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) { c.Concurrency, c.Prefetch, c.Tries = 2, 0, 1 })
	f.Start(2)
	ids, err := b.disp.Push(b.ctx, faultworker.Task{Kind: faultworker.KindHold,
		HoldUntil: time.Now().Add(3 * time.Second).UnixMilli(), Trace: true})
	require.NoError(t, err)
	settings := "faults:{" + queue + "}:settings"
	var holdEnd time.Time
	require.Eventually(t, func() bool {
		v, err := b.engine.Client().HGet(b.ctx, settings, "hold").Result()
		if err != nil {
			return false
		}
		ms, _ := strconv.ParseInt(v, 10, 64)
		holdEnd = time.UnixMilli(ms)
		return true
	}, 20*time.Second, 5*time.Millisecond, "a handler holds the queue")
	pushedAt := time.Now()
	b.disp.PushN(b.ctx, jobs, func(i int) faultworker.Task { return faultworker.Task{Seq: i, Millis: 1, Trace: true} })
	harness.Drain(t, b.engine, queue, 2*time.Minute)
	f.StopAll(10 * time.Second)

	recs := f.Records()
	early, byPID := 0, map[int]int{}
	var holdAttempts []int
	for _, r := range recs {
		switch {
		case r.Kind == 'S' && r.ID == ids[0]:
			holdAttempts = append(holdAttempts, r.Attempt)
		case r.Kind == 'B' && r.ID != ids[0]:
			byPID[r.PID]++
			if r.At.Before(holdEnd) {
				early++
				if early > 1 {
					continue
				}
				t.Logf("job %s began %v before the hold ended, %v after the push", r.ID, holdEnd.Sub(r.At), r.At.Sub(pushedAt))
			}
		}
	}
	t.Logf("figures: hold on %v before its end; %d jobs pushed during it ran after it, by process %v",
		holdEnd.Sub(pushedAt).Round(time.Millisecond), jobs, byPID)
	require.Zero(t, early, "no job began, in any process, before the hold ended")
	require.GreaterOrEqual(t, len(holdAttempts), 2, "the held job ran again after the hold")
	for _, a := range holdAttempts {
		require.Equal(t, 1, a, "a hold uses no attempt")
	}
	o := b.check(t, f)
	require.Equal(t, jobs+1, o.Done)
	require.Zero(t, o.Failed)
	holds, err := runtime.NewInspector(b.engine).QueueHolds(b.ctx, []string{queue})
	require.NoError(t, err)
	require.Empty(t, holds)
}
