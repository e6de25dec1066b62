package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// hourLease is a worker whose heartbeat comes every 20 minutes: a cancel
// it sees within a test's wait came by its note, not by the heartbeat.
var hourLease = runtime.WorkerConfig{RetryAfter: time.Hour, Timeout: 50 * time.Minute, Tries: 5, Concurrency: 4, Grace: 100 * time.Millisecond}

// A running job's cancel reaches its worker by a note, long before the
// heartbeat would find it.
func TestCancelToldAtOnce(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		bl := newBlocker()
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return bl.run(ctx) })
		ids := b.dispatch(t, job(1, runtime.JobOptions{Tries: 5}))
		b.start(t, hourLease)
		eventually(t, func() bool { return bl.runs(ids[0]) == 1 }, "the job runs")

		c, err := runtime.NewInspector(b.engine).Cancel(b.ctx, "default", ids[0], 1)
		require.NoError(t, err)
		require.Equal(t, runtime.Cancelled{Was: runtime.StateReserved, Attempts: 1, Told: true}, c)
		eventually(t, func() bool { return bl.cause(ids[0]) != nil }, "the handler's context ends long before the heartbeat")
		require.ErrorIs(t, bl.cause(ids[0]), runtime.ErrCancelled)
		eventually(t, func() bool { return len(b.log.of(runtime.JobCancelled)) == 1 }, "JobCancelled is emitted")
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
	})
}

// A note is a hint: the worker checks the job's state as its heartbeat
// does, so a note of a job that was not cancelled (as the note of a
// cancel of an earlier attempt is, once the job runs again) cancels
// nothing. Notes are handled in order, so once a real cancel sent after
// it has ended its job, the false note has been handled.
func TestCancelNoteFencedByState(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		bl := newBlocker()
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return bl.run(ctx) })
		ids := b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{}))
		b.start(t, hourLease)
		eventually(t, func() bool { return bl.runs(ids[0]) == 1 && bl.runs(ids[1]) == 1 }, "both jobs run")

		note := "cancel\ndefault\n" + ids[0]
		if b.backend == "cluster" {
			require.NoError(t, b.rdb.SPublish(b.ctx, b.prefix+":notes", note).Err())
		} else {
			require.NoError(t, b.rdb.Publish(b.ctx, b.prefix+":notes", note).Err())
		}
		c, err := runtime.NewInspector(b.engine).Cancel(b.ctx, "default", ids[1], 1)
		require.NoError(t, err)
		require.True(t, c.Told)
		eventually(t, func() bool { return bl.cause(ids[1]) != nil }, "the cancelled job ends")

		require.NoError(t, bl.cause(ids[0]), "the job the false note named runs on")
		found, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, runtime.StateReserved, found.State)
	})
}
