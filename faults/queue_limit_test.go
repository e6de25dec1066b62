package faults_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestQueueLimitAcrossProcesses runs a queue with a concurrency limit of
// 5 on three worker processes of 20 handlers each: by the handlers' own
// begin and end times, never more than 5 of its jobs run at once. Then a
// worker holding all 5 slots is killed with SIGKILL while two others
// wait: they take the slots once its leases run out, and not before.
func TestQueueLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	const limit = 5
	jobs := harness.Scale(10_000, 10_000)
	retryAfter := 2 * time.Second
	b := setup(t)
	require.NoError(t, runtime.NewInspector(b.engine).SetQueueLimit(b.ctx, queue, limit))
	cfg := func(c *faultworker.Config) {
		c.Concurrency, c.Prefetch = 20, 0
		c.RetryAfter, c.Timeout = retryAfter, time.Second
	}

	// Three processes drain the queue under the limit. Their leases and
	// timeouts are long: a busy machine that stalls a worker for a second
	// or two must not make a job of 1 ms run twice.
	f := b.fleet(t, func(c *faultworker.Config) {
		cfg(c)
		c.RetryAfter, c.Timeout = 30*time.Second, 20*time.Second
	})
	b.disp.PushN(b.ctx, jobs, func(int) faultworker.Task { return faultworker.Task{Millis: 1, Trace: true} })
	start := time.Now()
	f.Start(3)
	harness.Drain(t, b.engine, queue, 2*time.Minute)
	took := time.Since(start)
	f.StopAll(10 * time.Second)
	peak, runs := overlap(f.Records(), nil)
	t.Logf("figures: %d jobs on 3 workers x 20 under a limit of %d: %d runs, at most %d at once, drained in %v",
		jobs, limit, runs, peak, took.Round(100*time.Millisecond))
	require.Equal(t, jobs, runs, "every job ran once")
	require.LessOrEqual(t, peak, limit, "never more runs at once than the limit")
	require.Equal(t, limit, peak, "the limit was used in full")

	// One worker takes all 5 slots with long jobs; two more wait; the
	// first is killed. The long jobs' first attempts run until the kill,
	// however long starting the other two takes on a busy machine: with
	// the workers' Timeout of 1 s, an attempt cut short before the kill
	// would end, go back to the queue and run again, one run more than
	// the count below.
	k := b.fleet(t, cfg)
	b.disp.PushN(b.ctx, limit, func(int) faultworker.Task {
		return faultworker.Task{FirstMillis: 60_000, Millis: 1, Trace: true, Opts: runtime.JobOptions{Timeout: 2 * time.Minute}}
	})
	k.Start(1)
	waitRecords(t, k.Proc(0).Ledger, 'B', limit)
	const after = 500
	b.disp.PushN(b.ctx, after, func(int) faultworker.Task {
		return faultworker.Task{Millis: 1, Trace: true, Opts: runtime.JobOptions{Timeout: time.Minute}}
	})
	k.Replace(1)
	k.Replace(2)
	killed := k.Kill(0)
	killedAt := time.Now()
	leases, err := b.engine.Client().ZRangeWithScores(b.ctx, harness.Keys("faults", queue).Reserved, 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, leases, limit, "the killed worker held the 5 slots")
	firstExpiry := time.UnixMilli(int64(leases[0].Score))
	harness.Drain(t, b.engine, queue, retryAfter+30*time.Second)
	k.StopAll(10 * time.Second)

	recs := k.Records()
	peak, runs = overlap(recs, map[int]time.Time{killed.PID(): killedAt})
	var firstTaken time.Time
	for _, r := range recs {
		if r.Kind == 'B' && r.PID != killed.PID() && (firstTaken.IsZero() || r.At.Before(firstTaken)) {
			firstTaken = r.At
		}
	}
	t.Logf("figures: killed a worker holding %d slots; its first lease ran out %v after the kill, and the others' first job began %v after the kill; %d runs, at most %d at once",
		limit, firstExpiry.Sub(killedAt).Round(time.Millisecond), firstTaken.Sub(killedAt).Round(time.Millisecond), runs, peak)
	require.Equal(t, after+2*limit, runs, "every job ran: the killed worker's 5 twice")
	require.LessOrEqual(t, peak, limit)
	require.False(t, firstTaken.Before(firstExpiry), "no job began while the killed worker's leases held the slots")
	o, err := harness.Check(b.ctx, b.engine, queue, b.disp.Acked(), slices.Concat(f.Records(), recs))
	require.NoError(t, err)
	t.Logf("outcome: %v", o)
	harness.RequireClean(t, o)
	require.Zero(t, o.Failed)
}

// overlap returns the most traced runs (B to E lines) that were under
// way at once, and the number of runs. A run with no E line ended when
// its process was killed, at dead[pid].
func overlap(recs []faultworker.Record, dead map[int]time.Time) (peak, runs int) {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	open := map[string]faultworker.Record{}
	for _, r := range recs {
		switch r.Kind {
		case 'B':
			open[r.ID+"/"+itoa(r.PID)] = r
			edges = append(edges, edge{r.At, 1})
			runs++
		case 'E':
			delete(open, r.ID+"/"+itoa(r.PID))
			edges = append(edges, edge{r.At, -1})
		}
	}
	for _, r := range open {
		if at, ok := dead[r.PID]; ok {
			edges = append(edges, edge{at, -1})
		}
	}
	// At equal times an end comes first: a run's end is written before
	// its job is acknowledged, and the next run begins after a reserve.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	cur := 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak, runs
}

// waitRecords waits until ledger has n lines of kind.
func waitRecords(t *testing.T, ledger string, kind byte, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		recs, _ := faultworker.ReadLedger(ledger)
		got := 0
		for _, r := range recs {
			if r.Kind == kind {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d %c records in %s", n, kind, ledger)
}
