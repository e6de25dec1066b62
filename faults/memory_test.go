package faults_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestOversizePayload pushes a job over the payload cap among good ones:
// the whole call is refused with ErrPayloadTooLarge and nothing is
// pushed.
func TestOversizePayload(t *testing.T) {
	t.Parallel()
	b := setup(t)
	capBytes := b.engine.Config().MaxPayload
	var out []runtime.Outgoing
	for i := range 3 {
		task := faultworker.Task{Seq: i}
		if i == 1 {
			task.Pad = bytes.Repeat([]byte{'x'}, capBytes)
		}
		env, err := runtime.NewPendingDispatch(task).OnQueue(queue).Envelope()
		require.NoError(t, err)
		out = append(out, runtime.Outgoing{Envelope: env})
	}
	err := b.engine.PushMany(b.ctx, out)
	require.ErrorIs(t, err, runtime.ErrPayloadTooLarge)
	t.Logf("figures: a payload over the %d-byte cap is refused: %v", capBytes, err)
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{}, s, "nothing is pushed")
}

// TestOutOfMemory fills a Redis whose maxmemory is set, under
// noeviction, until pushes fail. From then on every dispatch fails with
// a clear error, and nothing pushed before is lost: workers, which need
// no new memory to reserve and ack, drain the queue.
func TestOutOfMemory(t *testing.T) {
	t.Parallel()
	b := setup(t, "--maxmemory-policy", "noeviction")
	rdb := b.redis.Client()
	used := usedMemory(t, b)
	limit := used + harness.Scale(int64(4<<20), int64(64<<20))
	require.NoError(t, rdb.ConfigSet(b.ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err())

	pad := bytes.Repeat([]byte{'p'}, 512)
	var first error
	for i := 0; first == nil; i++ {
		_, first = b.disp.Push(b.ctx, faultworker.Task{Pad: pad})
		require.Less(t, i, 1_000_000, "maxmemory never reached")
	}
	acked := len(b.disp.Acked())
	refused := 0
	for range 20 {
		_, err := b.disp.Push(b.ctx, faultworker.Task{Pad: pad})
		require.Error(t, err, "every dispatch errors once maxmemory is reached")
		require.Contains(t, err.Error(), "OOM")
		refused++
	}
	// Not one refused job made it in, not even in part. (LLEN, not
	// Inspector.Sizes: see TestSizesUnderOOM.)
	ready, err := rdb.LLen(b.ctx, harness.Keys("faults", queue).Ready).Result()
	require.NoError(t, err)
	require.Equal(t, acked, int(ready))
	t.Logf("figures: maxmemory %d bytes reached after %d jobs; %d more dispatches all refused: %v", limit, acked, refused, first)

	f := b.fleet(t, nil)
	f.Start(2)
	harness.Drain(t, b.engine, queue, 2*time.Minute)
	f.StopAll(15 * time.Second)
	o := b.check(t, f)
	require.Zero(t, o.Failed)
	require.Zero(t, o.Duplicates)
}

func usedMemory(t *testing.T, b bundle) int64 {
	t.Helper()
	info, err := b.redis.Client().Info(b.ctx, "memory").Result()
	require.NoError(t, err)
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}

func sizes(t *testing.T, b bundle) runtime.Sizes {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	return s
}

// TestSizesUnderOOM reads queue sizes and the failed store of a Redis
// past its maxmemory. Redis refuses every command queued inside MULTI
// when it is out of memory, read-only ones too, so Inspector.Sizes and
// FailedStore.List and Get, which read in a MULTI transaction, fail
// just when an operator most needs them.
func TestSizesUnderOOM(t *testing.T) {
	t.Parallel()
	b := setup(t, "--maxmemory-policy", "noeviction")
	_, err := b.disp.Push(b.ctx, faultworker.Task{})
	require.NoError(t, err)
	require.NoError(t, b.redis.Client().ConfigSet(b.ctx, "maxmemory", "1").Err())
	_, err = b.disp.Push(b.ctx, faultworker.Task{})
	require.ErrorContains(t, err, "OOM", "Redis is past maxmemory")
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Ready: 1}, s)
	_, err = runtime.NewInspector(b.engine).Failed().List(b.ctx, queue, 0, 10)
	require.NoError(t, err)
}

// TestEvictionPolicyWarning starts a worker that accepts the risk
// (AllowEviction) on a Redis that may evict keys: it warns at start. On
// noeviction it does not. Without AllowEviction such a worker refuses to
// start (runtime's TestEvictingRedisIsRefused).
func TestEvictionPolicyWarning(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"allkeys-lru", "volatile-lru", "noeviction"} {
		b := setup(t, "--maxmemory-policy", policy)
		f := b.fleet(t, func(c *faultworker.Config) { c.AllowEviction = true })
		f.Start(1)
		// The worker is ready before it runs; give it time to check.
		var warned []string
		for deadline := time.Now().Add(5 * time.Second); len(warned) == 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			warned = f.LogLines("maxmemory-policy", policy)
		}
		f.StopAll(10 * time.Second)
		if policy == "noeviction" {
			require.Empty(t, warned)
			continue
		}
		require.NotEmpty(t, warned, "a worker on a Redis with maxmemory-policy %s warns", policy)
		t.Logf("figures: %s warns: %s", policy, warned[0])
	}
}

// TestHeartbeatUnderOOM runs a job three times as long as its lease on a
// Redis that goes past maxmemory while the job runs. Renewing a lease
// takes no new memory, so the heartbeat must go on and the job run once.
func TestHeartbeatUnderOOM(t *testing.T) {
	t.Parallel()
	b := setup(t, "--maxmemory-policy", "noeviction")
	const retryAfter = time.Second
	f := b.fleet(t, func(c *faultworker.Config) { c.RetryAfter, c.Timeout = retryAfter, 900*time.Millisecond })
	f.Start(2)
	_, err := b.disp.Push(b.ctx, faultworker.Task{Millis: int(3 * retryAfter / time.Millisecond), Opts: runtime.JobOptions{Timeout: time.Minute}})
	require.NoError(t, err)
	// Either worker may take the job.
	waitRecordIn(t, 'S', 1, f.Proc(0).Ledger, f.Proc(1).Ledger)
	require.NoError(t, b.redis.Client().ConfigSet(b.ctx, "maxmemory", "1").Err())
	time.Sleep(4 * retryAfter)
	require.NoError(t, b.redis.Client().ConfigSet(b.ctx, "maxmemory", "0").Err())
	harness.Drain(t, b.engine, queue, 30*time.Second)
	f.StopAll(10 * time.Second)
	o := b.check(t, f)
	require.Equal(t, 1, o.Runs, "the job runs once: %v", f.LogLines("heartbeat"))
}

// TestSettleUnderOOM makes every call a worker makes on a Redis past its
// maxmemory, under noeviction. Extend, ack, release and migrate take no
// new memory and are declared allow-oom; reserve and fail take some but
// start with a write that Redis allows there (see their Lua headers). All
// succeed; a push is refused.
func TestSettleUnderOOM(t *testing.T) {
	t.Parallel()
	b := setup(t, "--maxmemory-policy", "noeviction")
	for range 6 {
		_, err := b.disp.Push(b.ctx, faultworker.Task{})
		require.NoError(t, err)
	}
	rdb := b.redis.Client()
	require.NoError(t, rdb.ConfigSet(b.ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = rdb.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	_, err := b.disp.Push(b.ctx, faultworker.Task{})
	require.ErrorContains(t, err, "OOM", "Redis is past maxmemory")

	e := b.engine
	batch, err := runtime.NewBroker(e).Reserve(b.ctx, queue, 5, time.Minute)
	require.NoError(t, err, "reserve")
	require.Len(t, batch.Jobs, 5)
	refs := make([]runtime.Ref, len(batch.Jobs))
	for i, j := range batch.Jobs {
		refs[i] = j.Ref
	}
	lost, err := runtime.NewBroker(e).Extend(b.ctx, time.Minute, refs...)
	require.NoError(t, err, "extend")
	require.Empty(t, lost)
	require.NoError(t, runtime.NewBroker(e).Ack(b.ctx, refs[0]), "ack")
	require.NoError(t, runtime.NewBroker(e).Release(b.ctx, runtime.ReleaseOpts{}, refs[1]), "release")
	require.NoError(t, runtime.NewBroker(e).Release(b.ctx, runtime.ReleaseOpts{Delay: time.Millisecond, Exception: true}, refs[2]), "release with a delay")
	require.NoError(t, runtime.NewBroker(e).Fail(b.ctx, runtime.Failure{Ref: refs[3], Err: errors.New("failed past maxmemory")}), "fail")

	short, err := runtime.NewBroker(e).Reserve(b.ctx, queue, 1, 50*time.Millisecond)
	require.NoError(t, err)
	require.Len(t, short.Jobs, 1)
	time.Sleep(100 * time.Millisecond)
	// The delayed job may have been moved already, by the migrate that
	// runs with each reserve; the expired one is moved here.
	m, err := runtime.NewBroker(e).Migrate(b.ctx, queue)
	require.NoError(t, err, "migrate")
	require.Equal(t, 1, m.Expired)
	require.Equal(t, runtime.Sizes{Ready: 3, Reserved: 1, Failed: 1}, sizes(t, b))
}
