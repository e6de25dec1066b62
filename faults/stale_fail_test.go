package faults_test

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestStaleFailRunsNoHooks runs the first job of a chain with a catch,
// or of a batch with a then and a catch, on worker A; the job fails
// itself on its first attempt, and succeeds on later ones. A is stopped
// with SIGSTOP before its handler returns, past its lease; worker B takes
// the job over, and while B's run is under way A is continued, and its
// handler returns FailRequest. A's fail is refused, and nothing of it takes
// effect: the chain's catch does not run and its next link runs once;
// the batch counts no failure, is not cancelled, never runs its catch,
// runs its then once, and its second job, due later, runs.
func TestStaleFailRunsNoHooks(t *testing.T) {
	for _, kind := range []string{"chain", "batch"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			const retryAfter = time.Second
			b := setup(t)
			f := b.fleet(t, func(c *faultworker.Config) {
				c.RetryAfter, c.Timeout, c.Concurrency = retryAfter, 900*time.Millisecond, 1
			})
			f.Start(1)
			a := f.Proc(0)

			// The handler ignores its context: once A is continued it
			// returns FailRequest whatever timeout or lost lease it finds.
			opts := runtime.JobOptions{Queue: queue, Tries: 3}
			first := faultworker.Task{Seq: 1, Kind: faultworker.KindFail, Until: 1, Millis: 700, IgnoreContext: true, Opts: opts}
			second := faultworker.Task{Seq: 2, Opts: opts}
			ctx := runtime.WithDispatcher(b.ctx, b.engine)
			var batchID string
			var err error
			switch kind {
			case "chain":
				_, err = runtime.Chain(first, second).Catch(faultworker.Callback("chain-catch")).Dispatch(ctx)
			case "batch":
				// The second job is due after A's stale fail: a batch
				// cancelled by it would skip the job.
				batchID, err = runtime.NewBatch(first, runtime.NewPendingDispatch(second).Delay(4*retryAfter)).
					Then(faultworker.Callback("batch-then")).Catch(faultworker.Callback("batch-catch")).Dispatch(ctx)
			}
			require.NoError(t, err)

			waitRecord(t, a.Ledger, 'S', 1)
			f.Signal(0, syscall.SIGSTOP)
			bp := f.Replace(1) // takes the job over once A's lease runs out
			waitRecord(t, bp.Ledger, 'S', 2)
			f.Signal(0, syscall.SIGCONT)
			resumed := time.Now()
			refusal := waitLog(t, a, "lease")
			refused := time.Since(resumed)
			harness.Drain(t, b.engine, queue, 20*time.Second)
			f.StopAll(10 * time.Second)

			recs := f.Records()
			calls := map[string]int{}
			for _, r := range recs {
				if r.Kind == 'C' {
					calls[r.Label]++
				}
			}
			runs := runsBySeq(recs, 1, 2)
			t.Logf("figures (%s): A, continued while B ran the job, logged within %v: %s; callbacks run %v; the first job ran %d times (%d to the end), the second %d (%d)",
				kind, refused.Round(time.Millisecond), refusal, calls,
				len(runs[1].Starts), len(runs[1].Finishes), len(runs[2].Starts), len(runs[2].Finishes))
			switch kind {
			case "chain":
				require.Zero(t, calls["chain-catch"], "A's refused fail runs no catch of the chain, which completed")
			case "batch":
				require.Zero(t, calls["batch-catch"], "A's refused fail runs no catch of the batch")
				st, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, batchID)
				require.NoError(t, err)
				require.True(t, ok, "the batch is kept")
				require.False(t, st.Cancelled(), "A's refused fail does not cancel the batch")
				require.Zero(t, st.Failed, "the batch counts no failure")
				require.True(t, st.Finished(), "every job of the batch succeeded: %+v", st)
				require.Equal(t, 1, calls["batch-then"], "the batch's then runs once")
			}
			require.Len(t, runs[1].Finishes, 1, "the first job succeeds once, on B")
			require.Equal(t, 2, runs[1].Finishes[0].Attempt)
			require.Len(t, runs[2].Starts, 1, "the second job runs once")
			require.Len(t, runs[2].Finishes, 1, "the second job succeeds")
			failed, err := harness.FailedIDs(b.ctx, b.engine, queue)
			require.NoError(t, err)
			require.Empty(t, failed, "A's stale fail is refused")
			problems, err := harness.Audit(b.ctx, b.engine.Client(), "faults", queue)
			require.NoError(t, err)
			require.Empty(t, problems)
			due, err := b.engine.Client().ZRange(b.ctx, harness.Keys("faults", queue).Hooks, 0, -1).Result()
			require.NoError(t, err)
			require.Empty(t, due, "A's refused fail leaves no hooks due, for a sweep to run")
		})
	}
}

// runsBySeq groups the S and F records of recs by the job's sequence
// number, with an entry for each of seqs: the jobs of chains and
// batches, which the dispatcher does not push, are known by the Seq they
// were given.
func runsBySeq(recs []faultworker.Record, seqs ...int) map[int]*harness.JobRuns {
	out := map[int]*harness.JobRuns{}
	for _, s := range seqs {
		out[s] = &harness.JobRuns{}
	}
	for _, r := range recs {
		if r.Kind != 'S' && r.Kind != 'F' {
			continue
		}
		j := out[r.Seq]
		if j == nil {
			j = &harness.JobRuns{}
			out[r.Seq] = j
		}
		if r.Kind == 'S' {
			j.Starts = append(j.Starts, r)
		} else {
			j.Finishes = append(j.Finishes, r)
		}
	}
	return out
}

// waitLog waits for a line of p's log that contains sub, and returns it.
func waitLog(t *testing.T, p *harness.Proc, sub string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(p.Log)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, sub) {
				return l
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no line with %q in the log of worker %s", sub, p.Name)
	return ""
}
