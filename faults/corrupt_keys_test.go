package faults_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// Redis does not undo the writes of a script that fails half-way. These
// tests spoil keys of the queue under concurrent dispatch and under
// workers, and check that a failing script leaves nothing behind: a
// dispatch that returned nil ran, one that returned an error did not, and
// a bad entry costs its own job alone.

// TestDispatchToWrongTypedKey dispatches concurrently while the queue's
// ready list is a string, dispatches the same envelope again, then mends
// the key, dispatches again half of the envelopes that were refused, and
// runs workers. Every dispatch made while the key was wrong fails (the
// group commit sends each push of a refused shared call again, alone,
// and that second push must not find a payload of the first); the
// dispatches made again after the mend run once each; the others never
// run, and nothing of them is left in Redis.
func TestDispatchToWrongTypedKey(t *testing.T) {
	t.Parallel()
	n := harness.Scale(200, 2000)
	b := setup(t)
	k := harness.Keys("faults", queue)
	rdb := b.engine.Client()
	require.NoError(t, rdb.Set(b.ctx, k.Ready, "spoilt", 0).Err())

	envs := make([]*runtime.Envelope, n)
	for i := range envs {
		env, err := runtime.NewPendingDispatch(faultworker.Task{Seq: i + 1}).OnQueue(queue).Envelope()
		require.NoError(t, err)
		envs[i] = env
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Go(func() { errs[i] = b.engine.Push(b.ctx, env) })
	}
	wg.Wait()
	nils := 0
	for _, err := range errs {
		if err == nil {
			nils++
		}
	}
	require.Zero(t, nils, "dispatches that returned nil while the ready list was a string, of %d", n)
	require.ErrorContains(t, errs[0], k.Ready, "the error names the key")
	require.Error(t, b.engine.Push(b.ctx, envs[0]), "the same envelope dispatched again")

	require.NoError(t, rdb.Del(b.ctx, k.Ready).Err())
	problems, err := harness.Audit(b.ctx, rdb, "faults", queue)
	require.NoError(t, err)
	require.Empty(t, problems, "the refused dispatches left nothing behind")

	acked := map[string]int{}
	for i := 0; i < n; i += 2 {
		require.NoError(t, b.engine.Push(b.ctx, envs[i]), "dispatch %d again, once mended", i)
		acked[envs[i].ID] = i + 1
	}
	require.Equal(t, runtime.Sizes{Ready: int64(len(acked))}, sizes(t, b))

	f := b.fleet(t, nil)
	f.Start(2)
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)
	o, err := harness.Check(b.ctx, b.engine, queue, acked, f.Records())
	require.NoError(t, err)
	t.Logf("outcome: %v", o)
	harness.RequireClean(t, o)
	require.Equal(t, len(acked), o.Done, "every dispatch that returned nil ran")
	require.Zero(t, o.Duplicates)
	require.Zero(t, o.Unacked, "a dispatch that returned an error ran")
	t.Logf("figures: %d concurrent dispatches to a wrong-typed key, %d returned nil; %d dispatched again once mended, %d ran; refused ones that ran %d",
		n, nils, len(acked), o.Done, o.Unacked)
}

// TestMalformedStateEntries spoils the state entries of a few jobs, some
// ready and some whose reservations have expired, among many, and runs
// workers. Each spoilt job fails alone into the failed store, with its
// entry in the error, without running; every other job runs once.
func TestMalformedStateEntries(t *testing.T) {
	t.Parallel()
	n := harness.Scale(400, 4000)
	b := setup(t)
	k := harness.Keys("faults", queue)
	rdb := b.engine.Client()
	b.disp.PushN(b.ctx, n, func(int) faultworker.Task { return faultworker.Task{} })

	// Every job gets a state entry: half are reserved and released, half
	// stay reserved under a lease that runs out.
	var released, expiring []runtime.Ref
	for len(released)+len(expiring) < n {
		lease := time.Minute
		if len(released) >= n/2 {
			lease = 200 * time.Millisecond
		}
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, min(n/2, 1000), lease)
		require.NoError(t, err)
		require.NotEmpty(t, batch.Jobs)
		for _, j := range batch.Jobs {
			if lease == time.Minute {
				released = append(released, j.Ref)
			} else {
				expiring = append(expiring, j.Ref)
			}
		}
	}
	require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, released...))
	bad := map[string]string{} // job ID -> its spoilt entry
	for i, r := range slices.Concat(released, expiring) {
		if i%50 == 7 {
			bad[r.ID] = fmt.Sprintf("spoilt-%d", i)
		}
	}
	for id, entry := range bad {
		require.NoError(t, rdb.HSet(b.ctx, k.State, id, entry).Err())
	}
	time.Sleep(250 * time.Millisecond) // the short leases run out

	f := b.fleet(t, nil)
	f.Start(2)
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)
	o := b.check(t, f)
	require.Equal(t, n-len(bad), o.Done, "every good job ran")
	require.Equal(t, len(bad), o.Failed)
	require.Zero(t, o.Duplicates)
	runs := harness.GroupRuns(f.Records())
	for id, entry := range bad {
		require.Nil(t, runs[id], "job %s with a spoilt state entry ran", id)
		fj, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, queue, id)
		require.NoError(t, err)
		require.True(t, ok, "job %s is in the failed store", id)
		require.Contains(t, fj.Error, fmt.Sprintf("state entry %q is malformed", entry))
	}
	t.Logf("figures: %d jobs, %d spoilt state entries (ready and expired); failed %d, good jobs run %d, lost %d",
		n, len(bad), o.Failed, o.Done, len(o.Lost))
}
