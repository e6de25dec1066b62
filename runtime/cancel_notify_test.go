package runtime_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
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

// A subscription that breaks is made again, and the worker then runs a
// heartbeat at once: a cancel whose note was lost meanwhile still ends
// the job long before the heartbeat's period. On a server of the test's
// own, whose pub/sub clients it kills.
func TestCancelAfterSubscriptionBroke(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+srv.Addr+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	b := wbundle{bundle: bundle{ctx: runtime.WithDispatcher(ctx, e), backend: "redis", engine: e, rdb: e.Client()}, router: runtime.NewRouter(), log: &eventLog{}}
	bl := newBlocker()
	runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return bl.run(ctx) })
	ids := b.dispatch(t, job(1, runtime.JobOptions{}))
	var logs syncBuffer
	cfg := hourLease
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	b.start(t, cfg)
	eventually(t, func() bool { return bl.runs(ids[0]) == 1 }, "the job runs")

	killed, err := b.rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
	require.NoError(t, err)
	require.Positive(t, killed, "the worker's subscription was killed")
	eventually(t, func() bool { return strings.Contains(logs.String(), "subscription to notes to workers failed") }, "the worker sees its subscription broken")
	_, err = runtime.NewInspector(e).Cancel(ctx, "default", ids[0], 1)
	require.NoError(t, err)
	eventually(t, func() bool { return bl.cause(ids[0]) != nil }, "the handler's context ends long before the heartbeat")
	require.ErrorIs(t, bl.cause(ids[0]), runtime.ErrCancelled)
	eventually(t, func() bool { return strings.Contains(logs.String(), "notes to workers work again") }, "the worker says its subscription works again")
}
