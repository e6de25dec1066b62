package faults_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/runtime"
)

// TestCancelRunningJob runs queue:cancel in this process on a job that a
// worker process runs: the handler's context ends within two heartbeat
// periods of the command's start (the handler writes when it returned,
// to the nanosecond), and the job never runs again.
func TestCancelRunningJob(t *testing.T) {
	const retryAfter = 2 * time.Second
	heartbeat := retryAfter / 3
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.RetryAfter, c.Timeout = retryAfter, retryAfter*9/10
		c.Concurrency = 4
	})
	ids, err := b.disp.Push(b.ctx, faultworker.Task{Millis: 60_000, Trace: true, Opts: runtime.JobOptions{Timeout: time.Minute}})
	require.NoError(t, err)
	id := ids[0]
	f.Start(1)
	require.Eventually(t, func() bool { return len(records(f, 'S', id)) == 1 }, 30*time.Second, 10*time.Millisecond, "the job starts")

	var out, errOut bytes.Buffer
	cmd := &console.Command{Name: "app", Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	began := time.Now()
	code := cmd.Run(b.ctx, []string{"queue:cancel", id, "--redis", b.redis.URL(), "--prefix", "faults"})
	require.Equal(t, 0, code, errOut.String())
	require.Contains(t, out.String(), "Cancelled running job "+id)

	require.Eventually(t, func() bool { return len(records(f, 'E', id)) == 1 }, 10*time.Second, 10*time.Millisecond, "the handler returns")
	took := records(f, 'E', id)[0].At.Sub(began)
	t.Logf("figures: the handler's context ended %v after queue:cancel began (heartbeat every %v, bound %v)", took.Round(time.Millisecond), heartbeat, 2*heartbeat)
	require.Less(t, took, 2*heartbeat, "the context ends within two heartbeat periods")

	// Past the lease: a job whose lease was merely lost would run again.
	time.Sleep(retryAfter + heartbeat)
	require.Len(t, records(f, 'S', id), 1, "the job never runs again")
	fj, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, queue, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, fj.Cancelled)
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Failed: 1}, s)
	f.StopAll(10 * time.Second)
	require.Empty(t, f.Deaths())
}

// TestCancelRacesSuccess cancels jobs of two worker processes just as
// they finish, many times over: each job ends acked or cancelled, as the
// cancel said, never both, and never runs twice.
func TestCancelRacesSuccess(t *testing.T) {
	const rounds, per = 10, 20
	const jobs = rounds * per
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.RetryAfter, c.Timeout = 2*time.Second, 1800*time.Millisecond
		c.Concurrency = 16
	})
	f.Start(2)
	in := runtime.NewInspector(b.engine)
	type result struct {
		cancelled bool
		err       error
	}
	ids := make([]string, 0, jobs)
	results := make([]result, jobs)
	for round := range rounds {
		var wg sync.WaitGroup
		for k := range per {
			i := round*per + k
			got, err := b.disp.Push(b.ctx, faultworker.Task{Millis: 20 + i%30})
			require.NoError(t, err)
			ids = append(ids, got[0])
			wg.Add(1)
			go func(id string) {
				defer wg.Done()
				// Wait for the job to start, then cancel it around the time
				// its handler returns.
				var seen int
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					j, ok, err := in.FindJob(b.ctx, queue, id)
					if err != nil || !ok || j.State != runtime.StateReady {
						seen = j.Attempts
						break
					}
				}
				time.Sleep(time.Duration(10+i%30+rand.IntN(10)) * time.Millisecond)
				_, err := in.Cancel(context.Background(), queue, id, max(seen, 1))
				results[i] = result{cancelled: err == nil, err: err}
			}(got[0])
		}
		wg.Wait()
	}
	time.Sleep(3 * time.Second) // past the lease of any job refused its ack
	f.StopAll(10 * time.Second)

	var acked, cancelled, finishedThenCancelled int
	for i, id := range ids {
		starts := records(f, 'S', id)
		require.LessOrEqual(t, len(starts), 1, "job %s never runs twice", id)
		fj, inStore, err := in.Failed().Get(b.ctx, queue, id)
		require.NoError(t, err)
		_, live, err := in.FindJob(b.ctx, queue, id)
		require.NoError(t, err)
		r := results[i]
		switch {
		case r.cancelled:
			require.True(t, inStore && fj.Cancelled, "job %s: the cancel said it won, so it is cancelled", id)
			cancelled++
			if len(records(f, 'F', id)) == 1 {
				finishedThenCancelled++ // its handler succeeded, and its ack was refused
			}
		case errors.Is(r.err, runtime.ErrNoJob):
			require.False(t, live || inStore, "job %s: the cancel found it gone, so it was acked, and is nowhere", id)
			require.Len(t, records(f, 'F', id), 1, "job %s was acked after its handler succeeded", id)
			acked++
		default:
			t.Fatalf("job %s: cancel: %v", id, r.err)
		}
	}
	t.Logf("figures: %d jobs: %d acked before the cancel, %d cancelled (%d of them after their handler had succeeded, whose ack was refused)",
		jobs, acked, cancelled, finishedThenCancelled)
	require.Equal(t, jobs, acked+cancelled)
	require.Positive(t, acked, "some cancels came late")
	require.Positive(t, cancelled, "some cancels came in time")
	s, err := in.Sizes(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Failed: int64(cancelled)}, s, "nothing is left in the queue")
	require.Empty(t, f.Deaths())
}

// records returns the ledger records of kind for job id.
func records(f interface{ Records() []faultworker.Record }, kind byte, id string) []faultworker.Record {
	var out []faultworker.Record
	for _, r := range f.Records() {
		if r.Kind == kind && r.ID == id {
			out = append(out, r)
		}
	}
	return out
}
