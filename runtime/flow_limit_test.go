package runtime_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

type flowJob struct{ N int }

// pushFlow pushes n flowJobs onto queue.
func pushFlow(t *testing.T, b bundle, queue string, n int) {
	t.Helper()
	body, err := runtime.Encode(flowJob{})
	require.NoError(t, err)
	out := make([]runtime.Outgoing, n)
	for i := range out {
		out[i] = runtime.Outgoing{Envelope: env(queue, "test.Flow", string(body))}
	}
	require.NoError(t, b.engine.PushMany(b.ctx, out))
}

func queueLimits(t *testing.T, b bundle, queue string) runtime.QueueLimits {
	t.Helper()
	l, err := runtime.NewInspector(b.engine).QueueLimits(b.ctx, queue)
	require.NoError(t, err)
	return l
}

func refsOf(jobs []runtime.Reservation) []runtime.Ref {
	refs := make([]runtime.Ref, len(jobs))
	for i, j := range jobs {
		refs[i] = j.Ref
	}
	return refs
}

// A concurrency limit caps the jobs under lease; an ack frees its slot
// and rings the doorbell; the limit changes from the next reserve.
func TestQueueLimitCapsReserve(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		in, br := runtime.NewInspector(b.engine), runtime.NewBroker(b.engine)
		pushFlow(t, b, "lim", 10)
		pushFlow(t, b, "free", 2)
		require.NoError(t, in.SetQueueLimit(b.ctx, "lim", 3))
		require.Equal(t, runtime.QueueLimit{Concurrency: 3}, queueLimits(t, b, "lim").QueueLimit)

		first := mustReserve(t, b, "lim", 10).Jobs
		require.Len(t, first, 3)
		require.Empty(t, mustReserve(t, b, "lim", 10).Jobs, "the limit is full")
		l := queueLimits(t, b, "lim")
		require.Equal(t, int64(3), l.Running)
		require.Equal(t, int64(2), l.HeldByLimit, "both calls were held back while jobs waited")
		require.Zero(t, l.HeldByRate)

		// An ack frees a slot and rings the doorbell for a waiting worker.
		notify := b.prefix + ":{lim}:notify"
		require.NoError(t, b.rdb.Del(b.ctx, notify).Err())
		require.NoError(t, br.Ack(b.ctx, first[0].Ref))
		require.Equal(t, int64(1), b.rdb.LLen(b.ctx, notify).Val(), "the ack rang the doorbell")
		third := mustReserve(t, b, "lim", 10).Jobs
		require.Len(t, third, 1)
		// A worker waiting on the doorbell while the limit is full wakes
		// when a slot frees, not when its wait times out.
		require.NoError(t, b.rdb.Del(b.ctx, notify).Err())
		rang := make(chan string, 1)
		go func() {
			q, _ := br.Wait(b.ctx, []string{"lim"}, 10*time.Second)
			rang <- q
		}()
		require.NoError(t, br.Ack(b.ctx, third[0].Ref))
		require.Equal(t, "lim", <-rang, "the ack's doorbell ended the wait")
		require.Len(t, mustReserve(t, b, "lim", 10).Jobs, 1)
		// So do a fail and a release to later.
		for _, settle := range []func(runtime.Ref) error{
			func(r runtime.Ref) error { return br.Fail(b.ctx, runtime.Failure{Ref: r}) },
			func(r runtime.Ref) error { return br.Release(b.ctx, runtime.ReleaseOpts{Delay: time.Hour}, r) },
		} {
			require.NoError(t, b.rdb.Del(b.ctx, notify).Err())
			require.NoError(t, settle(first[1].Ref))
			require.Equal(t, int64(1), b.rdb.LLen(b.ctx, notify).Val(), "the settle rang the doorbell")
			first = first[1:]
		}

		// A queue without a limit: its ack rings nothing.
		free := mustReserve(t, b, "free", 10).Jobs
		require.Len(t, free, 2)
		require.NoError(t, b.rdb.Del(b.ctx, b.prefix+":{free}:notify").Err())
		require.NoError(t, br.Ack(b.ctx, refsOf(free)...))
		require.Zero(t, b.rdb.LLen(b.ctx, b.prefix+":{free}:notify").Val())
		require.Zero(t, b.rdb.Exists(b.ctx, b.prefix+":{free}:settings").Val(), "a queue without limits has no settings")

		// Raised, it lets more through at once; removed, all.
		require.Equal(t, int64(1), queueLimits(t, b, "lim").Running)
		require.NoError(t, in.SetQueueLimit(b.ctx, "lim", 5))
		require.Len(t, mustReserve(t, b, "lim", 10).Jobs, 4)
		require.NoError(t, in.SetQueueLimit(b.ctx, "lim", 0))
		require.Len(t, mustReserve(t, b, "lim", 10).Jobs, 1, "the rest: 10 less 2 acked, 1 failed, 1 delayed, 5 running")
		require.Equal(t, runtime.QueueLimit{}, queueLimits(t, b, "lim").QueueLimit)

		// Bad input is refused and changes nothing.
		require.ErrorIs(t, in.SetQueueLimit(b.ctx, "lim", -1), runtime.ErrInvalid)
		require.ErrorIs(t, in.SetQueueRate(b.ctx, "lim", 5, 0), runtime.ErrInvalid)
		require.ErrorIs(t, in.SetQueueRate(b.ctx, "lim", 5, 1500*time.Microsecond), runtime.ErrInvalid)
		require.ErrorIs(t, in.SetQueueLimit(b.ctx, "a{b", 1), runtime.ErrInvalid)
		require.Equal(t, runtime.QueueLimit{}, queueLimits(t, b, "lim").QueueLimit)
	})
}

// Workers never run more of a queue's jobs at once than its limit, by
// the handlers' own count; a raised limit lets more start, and after a
// lowered one no job starts beside more than the new limit.
func TestQueueLimitHoldsAcrossWorkers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const jobs = 40
		in := runtime.NewInspector(b.engine)
		require.NoError(t, in.SetQueueLimit(b.ctx, "lim", 3))
		pushFlow(t, b, "lim", jobs)

		var running, maxRunning, afterLower, maxAfterLower, done atomic.Int64
		gate := make(chan struct{})
		r := runtime.NewRouter()
		runtime.Register(r, "test.Flow", func(ctx context.Context, _ flowJob) error {
			cur := running.Add(1)
			defer running.Add(-1)
			for {
				m := maxRunning.Load()
				if cur <= m || maxRunning.CompareAndSwap(m, cur) {
					break
				}
			}
			if afterLower.Load() == 1 {
				for {
					m := maxAfterLower.Load()
					if cur <= m || maxAfterLower.CompareAndSwap(m, cur) {
						break
					}
				}
			}
			<-gate
			done.Add(1)
			return nil
		})
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		var wg sync.WaitGroup
		for i := range 3 {
			w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"lim"}, Concurrency: 10,
				Prefetch: i, Sleep: 20 * time.Millisecond, Logger: quiet})
			require.NoError(t, err)
			wg.Add(1)
			go func() { defer wg.Done(); _ = w.Run(ctx) }()
		}
		eventually(t, func() bool { return running.Load() == 3 }, "3 jobs run")
		require.NoError(t, in.SetQueueLimit(b.ctx, "lim", 5))
		eventually(t, func() bool { return running.Load() == 5 }, "5 jobs run once the limit is 5")
		require.Equal(t, int64(5), maxRunning.Load())
		// With all 5 slots held, no job can be reserved now: the jobs that
		// start from here on were reserved under the lowered limit.
		afterLower.Store(1)
		require.NoError(t, in.SetQueueLimit(b.ctx, "lim", 2))
		close(gate)
		eventually(t, func() bool { return done.Load() == jobs }, "every job ran")
		require.LessOrEqual(t, maxAfterLower.Load(), int64(2), "no job started beside more than the lowered limit")
		require.Equal(t, int64(5), maxRunning.Load())
		cancel()
		wg.Wait()
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "lim"))
	})
}

// A rate lets Rate jobs through per window; the jobs it holds back are
// not reserved, so they use no attempt, and a waiting worker takes them
// when the window ends.
func TestQueueRate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		in, br := runtime.NewInspector(b.engine), runtime.NewBroker(b.engine)
		require.NoError(t, in.SetQueueRate(b.ctx, "rated", 2, time.Hour))
		require.Equal(t, runtime.QueueLimit{Rate: 2, Per: time.Hour}, queueLimits(t, b, "rated").QueueLimit)
		pushFlow(t, b, "rated", 5)
		got := mustReserve(t, b, "rated", 5).Jobs
		require.Len(t, got, 2)
		require.NoError(t, br.Ack(b.ctx, refsOf(got)...))
		require.Empty(t, mustReserve(t, b, "rated", 5).Jobs, "the window is used up, acks or not")
		require.Equal(t, int64(2), queueLimits(t, b, "rated").HeldByRate)
		require.Equal(t, runtime.Sizes{Ready: 3}, sizes(t, b, "rated"))
		require.NoError(t, in.SetQueueRate(b.ctx, "rated", 0, 0))
		rest := mustReserve(t, b, "rated", 5).Jobs
		require.Len(t, rest, 3)
		for _, j := range rest {
			require.Equal(t, 1, j.Attempts, "held back, the job used no attempt")
		}
		require.NoError(t, br.Ack(b.ctx, refsOf(rest)...))

		// A worker waits for each window: 3 windows for 11 jobs at 5 a
		// window, so the last starts 2 windows after the first reserve.
		const per = 300 * time.Millisecond
		require.NoError(t, in.SetQueueRate(b.ctx, "rated", 5, per))
		var mu sync.Mutex
		var starts []time.Time
		attempts := map[int]bool{}
		r := runtime.NewRouter()
		runtime.Register(r, "test.Flow", func(ctx context.Context, _ flowJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			starts = append(starts, time.Now())
			attempts[info.Attempt] = true
			mu.Unlock()
			return nil
		})
		t0 := time.Now()
		pushFlow(t, b, "rated", 11)
		w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"rated"}, Concurrency: 10,
			StopWhenEmpty: false, Sleep: 5 * time.Second, Logger: quiet})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		go func() { _ = w.Run(ctx) }()
		eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(starts) == 11 }, "every job ran")
		cancel()
		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, starts[10].Sub(t0), 2*per, "the 11th job waited for the third window")
		require.Equal(t, map[int]bool{1: true}, attempts, "each ran at its first attempt")
	})
}

// On a partitioned queue the limit is split over the partitions, and the
// whole queue never has more jobs under lease than the limit.
func TestQueueLimitPartitioned(t *testing.T) {
	t.Parallel()
	cfg := runtime.EngineConfig{Partitions: map[string]int{"parts": 3}}
	forEachBackend(t, cfg, func(t *testing.T, b bundle) { checkPartitionedLimit(t, b) })
}

func checkPartitionedLimit(t *testing.T, b bundle) {
	in := runtime.NewInspector(b.engine)
	require.ErrorContains(t, in.SetQueueLimit(b.ctx, "parts", 2), "must be at least its 3 partitions")
	require.ErrorContains(t, in.SetQueueRate(b.ctx, "parts", 2, time.Second), "must be at least its 3 partitions")
	require.NoError(t, in.SetQueueLimit(b.ctx, "parts", 4))
	pushFlow(t, b, "parts", 30)
	var held []runtime.Reservation
	for range 5 {
		held = append(held, mustReserve(t, b, "parts", 30).Jobs...)
	}
	require.Len(t, held, 4, "the shares add up to the limit")
	l := queueLimits(t, b, "parts")
	require.Equal(t, 4, l.Concurrency)
	require.Equal(t, int64(4), l.Running)
	require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, held[0].Ref))
	require.Len(t, mustReserve(t, b, "parts", 30).Jobs, 1, "the slot of the partition acked")
	require.NoError(t, in.SetQueueLimit(b.ctx, "parts", 0))
	require.Len(t, mustReserve(t, b, "parts", 30).Jobs, 25)
}

// EngineConfig.QueueLimits is checked at open, naming the field, and set
// when a worker starts.
func TestQueueLimitsConfig(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for _, bad := range []runtime.EngineConfig{
			{QueueLimits: map[string]runtime.QueueLimit{"q": {Concurrency: -1}}},
			{QueueLimits: map[string]runtime.QueueLimit{"q": {Rate: 5}}},
			{QueueLimits: map[string]runtime.QueueLimit{"q": {Concurrency: 2}}, Partitions: map[string]int{"q": 3}},
		} {
			_, err := runtime.NewEngine(b.ctx, b.rdb, bad)
			require.ErrorIs(t, err, runtime.ErrInvalid)
			require.ErrorContains(t, err, `EngineConfig.QueueLimits["q"]`)
		}
		e, err := runtime.NewEngine(b.ctx, b.rdb, runtime.EngineConfig{Prefix: b.prefix,
			QueueLimits: map[string]runtime.QueueLimit{"conf": {Concurrency: 7, Rate: 100, Per: time.Second}}})
		require.NoError(t, err)
		require.Equal(t, runtime.QueueLimit{}, queueLimits(t, b, "conf").QueueLimit, "not set before a worker starts")
		w, err := runtime.NewWorker(e, runtime.NewRouter(), runtime.WorkerConfig{Queues: []string{"conf"}, StopWhenEmpty: true, Logger: quiet})
		require.NoError(t, err)
		require.NoError(t, w.Run(b.ctx))
		require.Equal(t, runtime.QueueLimit{Concurrency: 7, Rate: 100, Per: time.Second}, queueLimits(t, b, "conf").QueueLimit)
	})
}

// The same on a Redis Cluster, the partitions on masters of their own.
func TestQueueLimitPartitionedCluster(t *testing.T) {
	t.Parallel()
	addrs := redistest.ClusterAddrs()
	if len(addrs) == 0 {
		t.Skipf("no cluster: set %s (scripts/test does)", redistest.ClusterEnv)
	}
	cfg := runtime.EngineConfig{Partitions: map[string]int{"parts": 3}}
	checkPartitionedLimit(t, setup(t, redistest.Backend{Name: "cluster", URL: "redis+cluster://" + strings.Join(addrs, ",")}, cfg))
}
