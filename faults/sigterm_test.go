package faults_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestSigtermChurn stops workers with SIGTERM twenty times while jobs
// run, starting a new one after each stop. A graceful stop lets running
// jobs finish and flushes their acks: nothing is lost and nothing runs
// twice.
func TestSigtermChurn(t *testing.T) {
	const stops = 20
	jobs := harness.Scale(6000, 30_000)
	every := harness.Scale(300*time.Millisecond, time.Second)
	b := setup(t)
	f := b.fleet(t, nil)
	b.disp.PushN(b.ctx, jobs, func(i int) faultworker.Task { return faultworker.Task{Millis: 20 + i%40} })
	f.Start(3)

	readyAtStops := 0
	for i := range stops {
		time.Sleep(every)
		s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
		require.NoError(t, err)
		if s.Ready > 0 {
			readyAtStops++
		}
		slot := i % 3
		p := f.Signal(slot, syscall.SIGTERM)
		f.Replace(slot) // while the old one finishes its jobs
		require.True(t, p.Wait(15*time.Second), "worker %s stops within 15s of SIGTERM", p.Name)
		require.True(t, p.State().Success(), "worker %s exits with status 0: %v", p.Name, p.State())
	}
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	t.Logf("figures: %d jobs, %d SIGTERM stops (%d with jobs still ready), %d duplicates, %d runs cut short",
		jobs, stops, readyAtStops, o.Duplicates, o.Runs-o.Completed)
	require.Zero(t, o.Duplicates, "no job runs twice")
	require.Zero(t, o.Failed)
	require.Equal(t, o.Runs, o.Completed, "every run finishes: the grace period is long enough")
	require.Empty(t, f.Deaths())
}

// TestSigtermGraceReturnsAttempts stops a worker with SIGTERM while it
// runs 20 jobs of 3 s that have one try each, with a grace of 1 s. The
// grace cuts the handlers short; each job goes back to its queue with
// its attempt returned, and runs to the end on the next worker as
// attempt 1: none fails as an attempt that did not finish.
func TestSigtermGraceReturnsAttempts(t *testing.T) {
	const jobs = 20
	const grace = time.Second
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.Concurrency, c.Tries, c.Grace = jobs, 1, grace
		c.RetryAfter, c.Timeout = 10*time.Second, 5*time.Second
	})
	f.Start(1)
	b.disp.PushN(b.ctx, jobs, func(int) faultworker.Task { return faultworker.Task{Millis: 3000} })
	a := f.Proc(0)
	waitStarts(t, a.Ledger, jobs)
	sent := time.Now()
	f.Signal(0, syscall.SIGTERM)
	require.True(t, a.Wait(grace+10*time.Second), "worker %s stops within the grace and 10 s of SIGTERM", a.Name)
	require.True(t, a.State().Success(), "worker %s exits with status 0: %v", a.Name, a.State())
	stopped := time.Since(sent)
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Ready: jobs}, s, "the jobs cut short are back on their queue")

	f.Replace(0)
	harness.Drain(t, b.engine, queue, 30*time.Second)
	f.StopAll(15 * time.Second)
	o := b.check(t, f)
	t.Logf("figures: %d jobs of 3 s, 1 try each, cut short by a grace of %v: worker stopped in %v; %v",
		jobs, grace, stopped.Round(time.Millisecond), o)
	require.Zero(t, o.Failed, "no job fails: a stop returns the attempt of each job it cuts short")
	require.Equal(t, jobs, o.Done)
	require.Zero(t, o.Duplicates)
	require.Equal(t, 2*jobs, o.Runs, "each job runs twice: cut short, then to the end")
	for _, r := range f.Records() {
		if r.Kind == 'F' {
			require.Equal(t, 1, r.Attempt, "job %s (seq %d) completes as attempt 1", r.ID, r.Seq)
		}
	}
	require.Empty(t, f.Deaths())
}

// TestSigtermLateSuccessAcked stops a worker with SIGTERM while it runs
// a job whose handler ignores its context and succeeds about 1.5 s after
// the grace of 1 s, within the 2 s the worker waits for such a handler.
// Its success is acked: the job does not run again on the next worker.
func TestSigtermLateSuccessAcked(t *testing.T) {
	const grace = time.Second
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.Grace = grace
		c.RetryAfter, c.Timeout = 10*time.Second, 5*time.Second
	})
	f.Start(1)
	_, err := b.disp.Push(b.ctx, faultworker.Task{Millis: 2500, IgnoreContext: true})
	require.NoError(t, err)
	a := f.Proc(0)
	waitRecord(t, a.Ledger, 'S', 1)
	sent := time.Now()
	f.Signal(0, syscall.SIGTERM)
	require.True(t, a.Wait(grace+10*time.Second), "worker %s stops within the grace and 10 s of SIGTERM", a.Name)
	require.True(t, a.State().Success(), "worker %s exits with status 0: %v", a.Name, a.State())

	f.Replace(0) // runs the job again if it came back
	harness.Drain(t, b.engine, queue, 20*time.Second)
	f.StopAll(15 * time.Second)
	o := b.check(t, f)
	recs := f.Records()
	var finish faultworker.Record
	for _, r := range recs {
		if r.Kind == 'F' {
			finish = r
		}
	}
	t.Logf("figures: the handler ended %v after SIGTERM (grace %v); %v", finish.At.Sub(sent).Round(time.Millisecond), grace, o)
	require.Equal(t, 1, o.Runs, "the job's success after the grace is acked: it does not run again")
	require.Equal(t, 1, o.Completed)
	require.Zero(t, o.Failed)
	require.Greater(t, finish.At.Sub(sent), grace, "the handler ends after the grace")
	require.Empty(t, f.LogLines("abandoned"), "the worker waits for the handler")
}

// waitStarts waits until ledger has n S records.
func waitStarts(t *testing.T, ledger string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	got := 0
	for time.Now().Before(deadline) {
		recs, _ := faultworker.ReadLedger(ledger)
		got = 0
		for _, r := range recs {
			if r.Kind == 'S' {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d S records in %s after 20s, want %d", got, ledger, n)
}
