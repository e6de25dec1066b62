package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func forEachPartitionedBackend(t *testing.T, parts map[string]int, fn func(t *testing.T, b bundle)) {
	t.Helper()
	forEachBackend(t, runtime.EngineConfig{Partitions: parts}, fn)
}

func TestPartitionNames(t *testing.T) {
	names := runtime.PartitionNames("emails", 4)
	require.Len(t, names, 4)
	require.Equal(t, "emails", names[0], "partition 0 is the queue itself")
	seen := map[string]bool{}
	for i, n := range names {
		if i > 0 {
			require.ErrorContains(t, runtime.ValidateQueueName(n), `contains "#"`, "a partition's name is no queue name")
		}
		require.False(t, seen[n])
		seen[n] = true
	}
	require.Equal(t, names, runtime.PartitionNames("emails", 4), "every engine computes the same names")
	require.Equal(t, []string{"emails"}, runtime.PartitionNames("emails", 1))

	_, err := runtime.NewEngine(context.Background(), redis.NewClient(&redis.Options{Addr: redistest.Addr(t)}),
		runtime.EngineConfig{Partitions: map[string]int{"emails": 0}})
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorContains(t, err, `EngineConfig.Partitions["emails"] (0)`)
	_, err = runtime.NewEngine(context.Background(), redis.NewClient(&redis.Options{Addr: redistest.Addr(t)}),
		runtime.EngineConfig{Partitions: map[string]int{"a{b}": 2}})
	require.ErrorIs(t, err, runtime.ErrInvalid)
}

func TestPartitionedQueue(t *testing.T) {
	forEachPartitionedBackend(t, map[string]int{"p": 4}, func(t *testing.T, b bundle) {
		parts := runtime.PartitionNames("p", 4)
		var out []runtime.Outgoing
		for i := range 40 {
			out = append(out, runtime.Outgoing{Envelope: env("p", "app.Job", fmt.Sprint(i))})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		require.NoError(t, b.engine.Later(b.ctx, env("p", "app.Job", "later"), time.Hour))
		require.Equal(t, runtime.Sizes{Ready: 40, Delayed: 1}, sizes(t, b, "p"), "Sizes sees the whole queue")
		for _, name := range parts[1:] {
			// The name of a partition past the first reaches it alone.
			require.Equal(t, int64(10), sizes(t, b, name).Ready, "pushes spread round robin")
		}
		qs, err := runtime.NewInspector(b.engine).Queues(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"p"}, qs, "partitions are not listed as queues")

		// Reserves take from the partitions in turn.
		from := map[string]int{}
		var jobs []runtime.Reservation
		for range 8 {
			got := mustReserve(t, b, "p", 1).Jobs
			require.Len(t, got, 1)
			from[got[0].Queue]++
			jobs = append(jobs, got...)
		}
		require.Len(t, from, 4)
		for _, n := range from {
			require.Equal(t, 2, n)
		}
		batch := mustReserve(t, b, "p", 100)
		require.Len(t, batch.Jobs, 32)
		require.False(t, batch.NextDue.IsZero(), "the delayed job is seen")
		jobs = append(jobs, batch.Jobs...)
		require.Equal(t, runtime.Sizes{Reserved: 40, Delayed: 1}, sizes(t, b, "p"))

		// Ack half, fail the rest: the failed store sees the whole queue.
		var failures []runtime.Failure
		var refs []runtime.Ref
		for i, j := range jobs {
			if i%2 == 0 {
				refs = append(refs, j.Ref)
			} else {
				failures = append(failures, runtime.Failure{Ref: j.Ref, Err: errors.New("boom")})
			}
		}
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, refs...))
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, failures...))
		fs := runtime.NewInspector(b.engine).Failed()
		n, err := fs.Count(b.ctx, "p")
		require.NoError(t, err)
		require.Equal(t, int64(20), n)
		require.Equal(t, runtime.Sizes{Delayed: 1, Failed: 20}, sizes(t, b, "p"))
		page, err := fs.List(b.ctx, "p", 5, 10)
		require.NoError(t, err)
		require.Len(t, page, 10)
		all, err := fs.List(b.ctx, "p", 0, 100)
		require.NoError(t, err)
		require.Len(t, all, 20)
		require.Equal(t, all[5:15], page, "pages of the merged, newest-first list")
		for i, j := range all {
			require.Equal(t, "p", j.Queue)
			if i > 0 {
				require.False(t, j.FailedAt.After(all[i-1].FailedAt), "newest first")
			}
		}
		got, ok, err := fs.Get(b.ctx, "p", all[7].ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, all[7].ID, got.ID)

		retried, err := fs.Retry(b.ctx, "p", all[0].ID, all[1].ID, "no-such-id")
		require.NoError(t, err)
		require.ElementsMatch(t, []string{all[0].ID, all[1].ID}, retried)
		forgot, err := fs.Forget(b.ctx, "p", all[2].ID, all[3].ID)
		require.NoError(t, err)
		require.Equal(t, int64(2), forgot)
		count, err := fs.RetryAll(b.ctx, "p")
		require.NoError(t, err)
		require.Equal(t, 16, count)
		require.Equal(t, runtime.Sizes{Ready: 18, Delayed: 1}, sizes(t, b, "p"))

		// Pause, Resume and Clear act on every partition.
		require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "p"))
		paused, err := runtime.NewInspector(b.engine).QueuePaused(b.ctx, "p")
		require.NoError(t, err)
		require.True(t, paused)
		require.Empty(t, mustReserve(t, b, "p", 100).Jobs)
		require.NoError(t, runtime.NewInspector(b.engine).ResumeQueue(b.ctx, "p"))
		paused, err = runtime.NewInspector(b.engine).QueuePaused(b.ctx, "p")
		require.NoError(t, err)
		require.False(t, paused)
		cleared, err := runtime.NewInspector(b.engine).ClearQueue(b.ctx, "p")
		require.NoError(t, err)
		require.Equal(t, int64(19), cleared)
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "p"))
		require.NoError(t, fs.Flush(b.ctx, "p"))
	})
}

func TestPartitionedQueueWorker(t *testing.T) {
	forEachPartitionedBackend(t, map[string]int{"high": 3}, func(t *testing.T, b bundle) {
		// Jobs pushed to the queue's own name by another path land in
		// partition 0 and run too.
		other, err := runtime.Open(b.ctx, urlOf(b), runtime.EngineConfig{Prefix: b.prefix})
		require.NoError(t, err)
		defer other.Close()
		_, err = runtime.Dispatch(runtime.WithDispatcher(b.ctx, other), onQueue(-1, "high"))
		require.NoError(t, err)

		ctx := runtime.WithDispatcher(b.ctx, b.engine)
		for i := range 30 {
			_, err := runtime.Dispatch(ctx, onQueue(i, "high"))
			require.NoError(t, err)
		}
		for i := range 5 {
			_, err := runtime.Dispatch(ctx, onQueue(100+i, "low"))
			require.NoError(t, err)
		}
		r := runtime.NewRouter()
		var mu sync.Mutex
		var order []string
		runtime.Register(r, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			order = append(order, info.Queue)
			mu.Unlock()
			return nil
		})
		w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{
			Queues: []string{"high", "low"}, Concurrency: 1, StopWhenEmpty: true, Logger: quiet, Sleep: 20 * time.Millisecond,
		})
		require.NoError(t, err)
		wctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		require.NoError(t, w.Run(wctx))
		require.Len(t, order, 36)
		for _, q := range order[:31] {
			require.NotEqual(t, "low", q, "the partitioned queue comes first, over all its partitions")
		}
		seen := map[string]bool{}
		for _, q := range order[:31] {
			seen[q] = true
		}
		require.Len(t, seen, 3, "every partition is served")
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "high"))
	})
}

func TestPartitionsOnDistinctMasters(t *testing.T) {
	b := clusterBundle(t)
	cc := b.rdb.(*redis.ClusterClient)
	for _, q := range []string{"emails", "default", "x", "reports", "q17"} {
		masters := map[string]bool{}
		for _, name := range runtime.PartitionNames(q, 3) {
			node, err := cc.MasterForKey(b.ctx, b.prefix+":{"+name+"}:ready")
			require.NoError(t, err)
			masters[node.Options().Addr] = true
		}
		require.Len(t, masters, 3, "the 3 partitions of %q sit on 3 masters", q)
	}
}

// urlOf returns the URL of a bundle's backend (an embedded server by its
// address).
func urlOf(b bundle) string {
	switch c := b.rdb.(type) {
	case *redis.ClusterClient:
		return "redis+cluster://" + strings.Join(c.Options().Addrs, ",")
	case *redis.Client:
		return "redis://" + c.Options().Addr
	}
	return ""
}

// QueuePartitions lists a queue's partitions, and PerPartition reads each
// alone, the first included, so that a tool may read a queue of many
// partitions a few at a time; QueueHolds takes a partition's name.
func TestPerPartitionReadsOnePartition(t *testing.T) {
	forEachPartitionedBackend(t, map[string]int{"p": 3}, func(t *testing.T, b bundle) {
		ins := runtime.NewInspector(b.engine)
		parts := ins.QueuePartitions("p")
		require.Equal(t, runtime.PartitionNames("p", 3), parts)
		require.Equal(t, []string{"plain"}, ins.QueuePartitions("plain"))
		var out []runtime.Outgoing
		for i := range 6 {
			out = append(out, runtime.Outgoing{Envelope: env("p", "app.Job", fmt.Sprint(i))})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		st, err := ins.States(b.ctx, []string{"p"})
		require.NoError(t, err)
		require.EqualValues(t, 6, st["p"].Ready, "the queue's own name is every partition")

		one := ins.PerPartition()
		st, err = one.States(b.ctx, parts)
		require.NoError(t, err)
		for _, name := range parts {
			require.EqualValues(t, 2, st[name].Ready, "%s alone", name)
		}
		_, ok, err := one.OldestReady(b.ctx, parts[0])
		require.NoError(t, err)
		require.True(t, ok)

		_, err = ins.HoldQueue(b.ctx, "p", time.Minute)
		require.NoError(t, err)
		holds, err := one.QueueHolds(b.ctx, parts)
		require.NoError(t, err)
		require.Len(t, holds, 3, "a hold of the queue is on each partition")
		for _, name := range parts {
			require.Greater(t, holds[name], 50*time.Second)
		}
	})
}
