package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

var errTooMany = errors.New("429 Too Many Requests")

// A handler's HoldQueue holds its whole queue: the job goes back ready
// without using an attempt (it has one try), no reserve of any engine
// takes a job of the queue while the hold lasts, other queues run on,
// and the queue runs again once the hold ends, here ended by hand.
func TestHoldQueueHoldsTheQueueForEveryWorker(t *testing.T) {
	t.Parallel()
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		attempts := map[int][]int{}
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			attempts[j.N] = append(attempts[j.N], info.Attempt)
			first := len(attempts[j.N]) == 1
			mu.Unlock()
			if j.N == 1 && first {
				return runtime.HoldQueue(time.Hour, errTooMany)
			}
			return nil
		})
		seen := func(n int) []int {
			mu.Lock()
			defer mu.Unlock()
			return append([]int(nil), attempts[n]...)
		}
		ins := runtime.NewInspector(b.engine)
		one := runtime.JobOptions{Queue: "api", Tries: 1}
		b.dispatch(t, job(1, one))
		// Two workers on one Redis, each serving both queues.
		cfg := runtime.WorkerConfig{Queues: []string{"api", "other"}, Concurrency: 2}
		b.start(t, cfg)
		b.start(t, cfg)
		eventually(t, func() bool {
			s := sizes(t, b.bundle, "api")
			return len(seen(1)) == 1 && s.Ready == 1 && s.Reserved == 0
		}, "the held job goes back ready")
		b.dispatch(t, job(2, one))
		holds, err := ins.QueueHolds(b.ctx, []string{"api", "other"})
		require.NoError(t, err)
		require.Len(t, holds, 1, "only api is held")
		require.InDelta(t, time.Hour.Seconds(), holds["api"].Seconds(), 60)

		// Any engine's reserve takes nothing, and says when the hold ends.
		other, err := runtime.NewEngine(b.ctx, b.rdb, b.engine.Config())
		require.NoError(t, err)
		res, err := runtime.NewBroker(other).Reserve(b.ctx, "api", 10, time.Minute)
		require.NoError(t, err)
		require.Empty(t, res.Jobs, "a held queue yields no job")
		// The other queue runs on meanwhile.
		b.dispatch(t, job(3, runtime.JobOptions{Queue: "other"}))
		eventually(t, func() bool { return len(seen(3)) == 1 }, "another queue is not held")
		require.Equal(t, []int{1}, seen(1))
		require.Empty(t, seen(2))
		require.Equal(t, int64(2), sizes(t, b.bundle, "api").Ready)

		until, err := ins.HoldQueue(b.ctx, "api", 0)
		require.NoError(t, err)
		require.True(t, until.IsZero())
		eventually(t, func() bool { return len(seen(1)) == 2 && len(seen(2)) == 1 }, "the queue runs once its hold ends")
		require.Equal(t, []int{1, 1}, seen(1), "the hold used no attempt")
		require.Empty(t, b.failed(t, "api"))
		holds, err = ins.QueueHolds(b.ctx, []string{"api"})
		require.NoError(t, err)
		require.Empty(t, holds)
	})
}

// A hold ends by itself when its time has passed by the Redis clock, and
// a shorter hold does not cut a longer one short.
func TestHoldQueueEndsByItself(t *testing.T) {
	t.Parallel()
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		var runs []int
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			runs = append(runs, info.Attempt)
			first := len(runs) == 1
			mu.Unlock()
			if first {
				return runtime.HoldQueue(200*time.Millisecond, errTooMany)
			}
			return nil
		})
		b.dispatch(t, job(1, runtime.JobOptions{Queue: "api", Tries: 1}))
		b.start(t, runtime.WorkerConfig{Queues: []string{"api"}})
		eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(runs) == 2
		}, "the job runs again once the hold has passed")
		mu.Lock()
		require.Equal(t, []int{1, 1}, runs)
		mu.Unlock()
		require.Empty(t, b.failed(t, "api"))

		ins := runtime.NewInspector(b.engine)
		long, err := ins.HoldQueue(b.ctx, "api", time.Hour)
		require.NoError(t, err)
		short, err := ins.HoldQueue(b.ctx, "api", time.Second)
		require.NoError(t, err)
		require.Equal(t, long, short, "a hold is never shortened")
	})
}

// A partitioned queue is held in every partition.
func TestHoldQueueHoldsEveryPartition(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{Partitions: map[string]int{"p": 3}}, func(t *testing.T, b bundle) {
		var out []runtime.Outgoing
		for i := range 6 {
			out = append(out, runtime.Outgoing{Envelope: env("p", "app.Job", fmt.Sprint(i))})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		ins := runtime.NewInspector(b.engine)
		_, err := ins.HoldQueue(b.ctx, "p", time.Hour)
		require.NoError(t, err)
		for _, name := range runtime.PartitionNames("p", 3) {
			res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, name, 10, time.Minute)
			require.NoError(t, err)
			require.Empty(t, res.Jobs, "partition %s is held", name)
		}
		_, err = ins.HoldQueue(b.ctx, "p", 0)
		require.NoError(t, err)
		res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "p", 10, time.Minute)
		require.NoError(t, err)
		require.Len(t, res.Jobs, 6)
	})
}

// HoldQueue with no positive hold is an error that names the mistake,
// which the worker counts as an exception, and the cause stays findable.
func TestHoldQueueNeedsAPositiveHold(t *testing.T) {
	err := runtime.HoldQueue(0, errTooMany)
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorIs(t, err, errTooMany)
	require.Contains(t, err.Error(), "HoldQueue(0s): the hold must be positive")
	_, ok := runtime.AsHold(err)
	require.False(t, ok)

	err = runtime.HoldQueue(30*time.Second, errTooMany)
	require.ErrorIs(t, err, errTooMany)
	d, ok := runtime.AsHold(err)
	require.True(t, ok)
	require.Equal(t, 30*time.Second, d)
	require.True(t, runtime.IsDeferral(err))
	require.Equal(t, "queue held for 30s: 429 Too Many Requests", err.Error())
}

// A hold that has ended leaves nothing in the queue's settings once a
// reserve has seen it end.
func TestEndedHoldIsDeleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: env("api", "app.Job", "x")}}))
		_, err := runtime.NewInspector(b.engine).HoldQueue(b.ctx, "api", 50*time.Millisecond)
		require.NoError(t, err)
		settings := b.prefix + ":{api}:settings"
		n, err := b.rdb.HLen(b.ctx, settings).Result()
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "the hold is the field of %s", settings)
		require.Eventually(t, func() bool {
			res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "api", 1, time.Minute)
			require.NoError(t, err)
			return len(res.Jobs) == 1
		}, 10*time.Second, 10*time.Millisecond)
		n, err = b.rdb.Exists(b.ctx, settings).Result()
		require.NoError(t, err)
		require.Zero(t, n, "the ended hold was deleted")
	})
}
