package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestCancelNotesAfterClusterFailover kills the master that holds the
// notes' shard channel, on a cluster of three masters with a replica
// each, of its own. Its replica takes over, the engine subscribes on it,
// and a cancel then reaches the running job by its note again, long
// before the heartbeat. The job's queue is on another master.
func TestCancelNotesAfterClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six servers and fails over; skipped with -short")
	}
	t.Parallel()
	ctx := context.Background()
	nodes := redistest.StartCluster(t, 3, time.Second)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	prefix := redistest.Prefix(t)
	e, err := runtime.Open(ctx, "redis+cluster://"+strings.Join(addrs, ","), runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	cc := e.Client().(*redis.ClusterClient)
	notesMaster, err := cc.MasterForKey(ctx, prefix+":notes")
	require.NoError(t, err)
	var victim *redistest.Server
	for _, n := range nodes {
		if n.Addr == notesMaster.Options().Addr {
			victim = n
		}
	}
	require.NotNil(t, victim)
	queue := ""
	for i := 0; queue == ""; i++ {
		q := fmt.Sprintf("q%d", i)
		m, err := cc.MasterForKey(ctx, prefix+":{"+q+"}:ready")
		require.NoError(t, err)
		if m.Options().Addr != victim.Addr {
			queue = q
		}
	}

	b := wbundle{bundle: bundle{ctx: runtime.WithDispatcher(ctx, e), backend: "cluster", engine: e, rdb: cc}, router: runtime.NewRouter(), log: &eventLog{}}
	bl := newBlocker()
	runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return bl.run(ctx) })
	ids := b.dispatch(t, onQueue(1, queue), onQueue(2, queue))
	var logs syncBuffer
	cfg := hourLease
	cfg.Queues = []string{queue}
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	b.start(t, cfg)
	eventually(t, func() bool { return bl.runs(ids[0]) == 1 && bl.runs(ids[1]) == 1 }, "the jobs run")
	c, err := runtime.NewInspector(e).Cancel(ctx, queue, ids[0], 1)
	require.NoError(t, err)
	require.True(t, c.Told, "the note reaches the worker before the failover")
	eventually(t, func() bool { return bl.cause(ids[0]) != nil }, "the first job's context ends")

	victim.Stop() // SIGKILL
	require.Eventually(t, func() bool {
		cc.ReloadState(ctx)
		m, err := cc.MasterForKey(ctx, prefix+":notes")
		return err == nil && m.Options().Addr != victim.Addr && m.Ping(ctx).Err() == nil
	}, 30*time.Second, 50*time.Millisecond, "a replica takes over the notes' slot")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "notes to workers work again") },
		30*time.Second, 10*time.Millisecond, "the worker subscribes on the new master")

	c, err = runtime.NewInspector(e).Cancel(ctx, queue, ids[1], 1)
	require.NoError(t, err)
	require.True(t, c.Told, "the note reaches the worker after the failover")
	eventually(t, func() bool { return bl.cause(ids[1]) != nil }, "the second job's context ends long before the heartbeat")
	require.ErrorIs(t, bl.cause(ids[1]), runtime.ErrCancelled)
}
