package faults_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/runtime"
)

// queueCommand runs a console command in this process, as an operator
// would, and returns its output; a non-zero exit fails the test.
func queueCommand(t *testing.T, b bundle, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := &console.Command{Name: "app", Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	code := cmd.Run(b.ctx, append(args, "--redis", b.redis.URL(), "--prefix", "faults"))
	require.Equal(t, 0, code, errOut.String())
	return out.String()
}

// awaitRecord waits until the ledgers hold a record of kind for id, and
// returns it.
func awaitRecord(t *testing.T, f interface{ Records() []faultworker.Record }, kind byte, id, what string) faultworker.Record {
	t.Helper()
	var got faultworker.Record
	require.Eventually(t, func() bool {
		rs := records(f, kind, id)
		if len(rs) > 0 {
			got = rs[0]
		}
		return len(rs) > 0
	}, 30*time.Second, 2*time.Millisecond, "%s: job %s", what, id)
	return got
}

// TestCancelToldAcrossProcesses cancels 200 running jobs, one at a time,
// with queue:cancel run in this process, on two worker processes with
// the default RetryAfter (a heartbeat every 30 s): the note of each
// cancel ends its handler's context, p99 under 250 ms from the
// command's start. Then queue:restart stops both processes, well within
// the 5 s of the restart mark's poll.
func TestCancelToldAcrossProcesses(t *testing.T) {
	const cancels = 200
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.RetryAfter, c.Timeout = 0, 0 // the defaults: 90 s and 60 s
		c.Concurrency = 8
	})
	f.Start(2)
	tasks := make([]faultworker.Task, cancels)
	for i := range tasks {
		tasks[i] = faultworker.Task{Seq: i, Millis: 300_000, Trace: true} // until cancelled, or the 60 s Timeout
	}
	ids, err := b.disp.Push(b.ctx, tasks...)
	require.NoError(t, err)
	require.Len(t, ids, cancels)
	lat := make([]time.Duration, 0, cancels)
	for _, id := range ids {
		awaitRecord(t, f, 'B', id, "the job starts")
		began := time.Now()
		out := queueCommand(t, b, "queue:cancel", id)
		require.Contains(t, out, "Cancelled running job "+id)
		require.Contains(t, out, "its worker was told to stop it now")
		lat = append(lat, awaitRecord(t, f, 'E', id, "the handler returns").At.Sub(began))
	}
	slices.Sort(lat)
	p50, p99 := lat[cancels/2-1], lat[cancels*99/100-1]
	t.Logf("figures: %d cancels of running jobs, queue:cancel's start to the handler's context ending: p50 %v, p99 %v, max %v (heartbeat every 30 s)",
		cancels, p50.Round(time.Microsecond), p99.Round(time.Microsecond), lat[cancels-1].Round(time.Microsecond))
	require.Less(t, p99, 250*time.Millisecond, "p99 of the cancels")

	in := runtime.NewInspector(b.engine)
	for _, id := range ids {
		require.Len(t, records(f, 'S', id), 1, "job %s ran once", id)
		fj, ok, err := in.Failed().Get(b.ctx, queue, id)
		require.NoError(t, err)
		require.True(t, ok && fj.Cancelled, "job %s is in the failed store, cancelled", id)
	}
	s, err := in.Sizes(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Failed: cancels}, s)

	began := time.Now()
	require.NoError(t, in.RestartWorkers(b.ctx))
	var exits []faultworker.Record
	require.Eventually(t, func() bool {
		exits = exits[:0]
		for _, r := range f.Records() {
			if r.Kind == 'X' {
				exits = append(exits, r)
			}
		}
		return len(exits) == 2
	}, 30*time.Second, 5*time.Millisecond, "both workers stop")
	var last time.Time
	for _, x := range exits {
		require.Equal(t, "restart_broadcast", x.Reason)
		if x.At.After(last) {
			last = x.At
		}
	}
	took := last.Sub(began)
	t.Logf("figures: queue:restart to the last of 2 workers stopped: %v (the restart mark's poll is every 5 s)", took.Round(time.Millisecond))
	require.Less(t, took, time.Second, "the restart's note stops the workers")
	for _, d := range f.Deaths() {
		require.Equal(t, "exit status 0", d.Status, "a worker stopped by queue:restart exits cleanly")
	}
}

// TestCancelFallsBackToHeartbeat runs workers on a Redis whose
// SUBSCRIBE is renamed away, so no note reaches them: queue:cancel says
// so, and the heartbeat ends the handler's context, within two of its
// periods.
func TestCancelFallsBackToHeartbeat(t *testing.T) {
	const retryAfter = 2 * time.Second
	heartbeat := retryAfter / 3
	b := setup(t, "--rename-command", "SUBSCRIBE", "")
	f := b.fleet(t, func(c *faultworker.Config) {
		c.RetryAfter, c.Timeout = retryAfter, retryAfter*9/10
		c.Concurrency = 4
	})
	ids, err := b.disp.Push(b.ctx, faultworker.Task{Millis: 60_000, Trace: true, Opts: runtime.JobOptions{Timeout: time.Minute}})
	require.NoError(t, err)
	id := ids[0]
	f.Start(1)
	awaitRecord(t, f, 'B', id, "the job starts")

	began := time.Now()
	out := queueCommand(t, b, "queue:cancel", id)
	require.Contains(t, out, "its worker stops it at its next heartbeat")
	took := awaitRecord(t, f, 'E', id, "the handler returns").At.Sub(began)
	t.Logf("figures: with no notes, the handler's context ended %v after queue:cancel began (heartbeat every %v)", took.Round(time.Millisecond), heartbeat)
	require.Less(t, took, 2*heartbeat, "the heartbeat finds the cancel")
	require.NotEmpty(t, f.LogLines("subscription to notes to workers failed"), "the worker says it works without notes")
	f.StopAll(10 * time.Second)
	require.Empty(t, f.Deaths())
}
