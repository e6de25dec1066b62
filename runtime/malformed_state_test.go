package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// One job's state entry ("attempts:exceptions:token") that does not
// parse must fail that job alone: the scripts that read the entries of
// many jobs at once (reserve, migrate) must neither fail half-way, after
// they have taken their jobs out of a list, nor hold up the other jobs.

// pushReleased pushes n jobs to queue with IDs prefix1..prefixN, reserves
// and releases them, so that each has a state entry, and returns the IDs.
func pushReleased(t *testing.T, b bundle, queue, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	out := make([]runtime.Outgoing, n)
	for i := range out {
		e := env(queue, "app.Job", fmt.Sprint(i))
		e.ID = fmt.Sprint(prefix, i+1)
		ids[i], out[i] = e.ID, runtime.Outgoing{Envelope: e}
	}
	require.NoError(t, b.engine.PushMany(b.ctx, out))
	var refs []runtime.Ref
	for _, j := range mustReserve(t, b, queue, n).Jobs {
		refs = append(refs, j.Ref)
	}
	require.Len(t, refs, n)
	require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, refs...))
	return ids
}

// checkMalformed checks a reserve that took every job of ids, where bad
// had the state entry entry: bad comes marked, the others as usual, on
// attempt attempt. It returns bad's reservation.
func checkMalformed(t *testing.T, jobs []runtime.Reservation, ids []string, bad, entry string, attempt int) runtime.Reservation {
	t.Helper()
	var got []string
	var marked runtime.Reservation
	for _, j := range jobs {
		got = append(got, j.ID)
		if j.ID == bad {
			marked = j
			continue
		}
		require.NoError(t, j.Err, "job %s", j.ID)
		require.Equal(t, attempt, j.Attempts, "job %s", j.ID)
	}
	require.ElementsMatch(t, ids, got, "every job is taken, the bad one too")
	require.ErrorIs(t, marked.Err, runtime.ErrMalformedState)
	var mse *runtime.MalformedStateError
	require.ErrorAs(t, marked.Err, &mse)
	require.Equal(t, runtime.MalformedStateError{Queue: marked.Queue, ID: bad, Entry: entry}, *mse)
	require.Zero(t, marked.Attempts)
	require.Zero(t, marked.Exceptions)
	return marked
}

func TestReserveHandsOutMalformedStateAlone(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const q = "bad-state"
		ids := pushReleased(t, b, q, "job", 7)
		require.NoError(t, b.rdb.HSet(b.ctx, b.prefix+":{"+q+"}:state", "job4", "garbage").Err())

		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, q, 10, time.Minute)
		require.NoError(t, err)
		bad := checkMalformed(t, batch.Jobs, ids, "job4", "garbage", 2)
		require.Equal(t, runtime.Sizes{Reserved: 7}, sizes(t, b, q))

		// The bad job is reserved under its token, so that it can be
		// failed with its error, and the good ones acked.
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: bad.Ref, Name: "app.Job", Err: bad.Err}))
		for _, j := range batch.Jobs {
			if j.ID != "job4" {
				require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, j.Ref))
			}
		}
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b, q))
		fj, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, q, "job4")
		require.NoError(t, err)
		require.True(t, ok)
		require.Contains(t, fj.Error, `state entry "garbage" is malformed`)
	})
}

// TestRetriedReserveHandsBackMalformedState: a reserve that the Redis
// client sends again after losing its reply hands the bad job back
// marked still, though without the entry, which the first run replaced.
func TestRetriedReserveHandsBackMalformedState(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const q = "bad-retried"
		ids := pushReleased(t, b, q, "job", 3)
		require.NoError(t, b.rdb.HSet(b.ctx, b.prefix+":{"+q+"}:state", "job2", "7").Err())
		twice := &replayScripts{sha: runtime.ScriptSHA("reserve")}
		b.rdb.AddHook(twice)
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, q, 10, time.Minute)
		require.NoError(t, err)
		require.Equal(t, 1, twice.replays())
		checkMalformed(t, batch.Jobs, ids, "job2", "", 2)
		require.Equal(t, runtime.Sizes{Reserved: 3}, sizes(t, b, q))
	})
}

func TestMigrateMovesMalformedStateAlone(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const q = "bad-expired"
		ids := pushReleased(t, b, q, "job", 8)
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, q, 8, 20*time.Millisecond)
		require.NoError(t, err)
		require.Len(t, batch.Jobs, 8)
		require.NoError(t, b.rdb.HSet(b.ctx, b.prefix+":{"+q+"}:state", "job3", "2:x:"+batch.Jobs[0].Token).Err())
		time.Sleep(50 * time.Millisecond) // the leases run out

		m, err := runtime.NewBroker(b.engine).Migrate(b.ctx, q)
		require.NoError(t, err)
		require.Equal(t, 8, m.Expired)
		require.Equal(t, runtime.Sizes{Ready: 8}, sizes(t, b, q))
		// The worker that held job3 cannot settle it any more.
		for _, j := range batch.Jobs {
			if j.ID == "job3" {
				require.ErrorIs(t, runtime.NewBroker(b.engine).Ack(b.ctx, j.Ref), runtime.ErrLeaseLost)
			}
		}

		again, err := runtime.NewBroker(b.engine).Reserve(b.ctx, q, 10, time.Minute)
		require.NoError(t, err)
		checkMalformed(t, again.Jobs, ids, "job3", "2:x:"+batch.Jobs[0].Token, 3)
	})
}

func TestWorkerFailsJobWithMalformedState(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var ran atomic.Int64
		var hooked atomic.Value
		runtime.Register(b.router, "test.Job",
			func(ctx context.Context, j testJob) error { ran.Add(1); return nil },
			runtime.OnFailed(func(ctx context.Context, j testJob, err error) { hooked.Store(fmt.Sprint(j.N, ": ", err)) }))
		ids := b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{}), job(3, runtime.JobOptions{}))
		var refs []runtime.Ref
		for _, j := range mustReserve(t, b.bundle, "default", 3).Jobs {
			refs = append(refs, j.Ref)
		}
		require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, refs...))
		require.NoError(t, b.rdb.HSet(b.ctx, b.prefix+":{default}:state", ids[1], "1:0").Err())

		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Tries: 3})
		require.Equal(t, int64(2), ran.Load(), "the other jobs run")
		fs := b.failed(t, "default")
		require.Len(t, fs, 1)
		require.Equal(t, ids[1], fs[0].ID)
		require.Contains(t, fs[0].Error, `state entry "1:0" is malformed`)
		require.Equal(t, "test.Job", fs[0].Name)
		require.Equal(t, "2: "+fs[0].Error, hooked.Load(), "its failed hook runs")
		failed := b.log.of(runtime.JobFailed)
		require.Len(t, failed, 1)
		require.True(t, errors.Is(failed[0].Err, runtime.ErrMalformedState))
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
	})
}
