package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// itemJob is a job of a test batch.
type itemJob struct {
	N    int
	Fail bool
	// FailOnce fails the first run only (then a retry succeeds).
	FailOnce bool
	// AddMore adds that many items to the job's batch.
	AddMore int
}

func (itemJob) JobName() string                { return "test.Item" }
func (itemJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j itemJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// batchRun records item runs and batch callbacks.
type batchRun struct {
	mu     sync.Mutex
	ran    []int
	failed map[int]bool // items that failed once already
	calls  []string
	states []runtime.BatchStatus
}

func (r *batchRun) register(t *testing.T, b wbundle) *runtime.Callback[string] {
	r.failed = map[int]bool{}
	runtime.Register(b.router, "test.Item", func(ctx context.Context, j itemJob) error {
		r.mu.Lock()
		r.ran = append(r.ran, j.N)
		failOnce := j.FailOnce && !r.failed[j.N]
		r.failed[j.N] = true
		r.mu.Unlock()
		if j.AddMore > 0 {
			info, _ := runtime.JobInfoFrom(ctx)
			var more []runtime.Job
			for i := range j.AddMore {
				more = append(more, itemJob{N: 100 + i})
			}
			if err := runtime.NewInspector(b.engine).Batches().Add(ctx, info.BatchID, more...); err != nil {
				return err
			}
		}
		if j.Fail || failOnce {
			return fmt.Errorf("item %d failed", j.N)
		}
		return nil
	})
	cb := runtime.NewCallback("test.batch", func(ctx context.Context, kind string, o runtime.Outcome) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		call := kind
		if o.Err != nil {
			call += ": " + o.Err.Error()
		}
		r.calls = append(r.calls, call)
		r.states = append(r.states, *o.Batch)
		return nil
	})
	runtime.RegisterCallback(b.router, cb)
	return cb
}

func (r *batchRun) items() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.ran)
	slices.Sort(out)
	return out
}

func (r *batchRun) callbacks() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// withCallbacks sets then, catch and finally to cb.
func withCallbacks(b *runtime.PendingBatch, cb *runtime.Callback[string]) *runtime.PendingBatch {
	return b.Then(cb.With("then")).Catch(cb.With("catch")).Finally(cb.With("finally"))
}

func findBatch(t *testing.T, b wbundle, id string) runtime.BatchStatus {
	t.Helper()
	s, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	return s
}

func TestBatchSucceeds(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var r batchRun
		cb := r.register(t, b)
		id, err := withCallbacks(runtime.NewBatch(
			itemJob{N: 1}, itemJob{N: 2}, runtime.NewPendingDispatch(itemJob{N: 3}).OnQueue("other"),
			runtime.Chain(itemJob{N: 4}, itemJob{N: 5}, itemJob{N: 6}),
		).Name("import"), cb).Dispatch(b.ctx)
		require.NoError(t, err)
		s := findBatch(t, b, id)
		require.Equal(t, 6, s.Total)
		require.Equal(t, 6, s.Pending)
		require.Equal(t, "import", s.Name)
		require.False(t, s.CreatedAt.IsZero())

		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"default", "other"}, StopWhenEmpty: true})
		require.Equal(t, []int{1, 2, 3, 4, 5, 6}, r.items())
		require.Equal(t, []string{"then", "finally"}, r.callbacks())
		s = findBatch(t, b, id)
		require.Equal(t, 6, s.Processed())
		require.Equal(t, 100, s.Progress())
		require.True(t, s.Finished())
		require.False(t, s.Cancelled())
		require.False(t, s.HasFailures())
		require.Equal(t, 0, r.states[0].Pending, "callbacks see the batch after the last job was counted")
	})
}

func TestBatchFailureCancels(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var r batchRun
		cb := r.register(t, b)
		id, err := withCallbacks(runtime.NewBatch(itemJob{N: 1}, itemJob{N: 2, Fail: true}, itemJob{N: 3}, itemJob{N: 4}), cb).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 1})
		require.Equal(t, []int{1, 2}, r.items(), "the jobs after the failure are skipped")
		require.Equal(t, []string{"catch: jobgen: job failed on its only try: item 2 failed", "finally"}, r.callbacks())
		s := findBatch(t, b, id)
		require.True(t, s.Cancelled())
		require.False(t, s.Finished())
		require.Equal(t, 1, s.Failed)
		require.Len(t, s.FailedIDs, 1)
		require.Equal(t, 1, s.Pending, "the failed job is still pending")
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))

		// Retrying resumes a batch cancelled by a failure.
		n, err := runtime.NewInspector(b.engine).Batches().Retry(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.False(t, findBatch(t, b, id).Cancelled())
	})
}

func TestBatchAllowFailuresAndRetry(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var r batchRun
		cb := r.register(t, b)
		id, err := withCallbacks(runtime.NewBatch(
			itemJob{N: 1, FailOnce: true}, itemJob{N: 2}, itemJob{N: 3, FailOnce: true},
			runtime.Chain(itemJob{N: 4}, itemJob{N: 5, FailOnce: true}, itemJob{N: 6}),
		).AllowFailures(), cb).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.Equal(t, []int{1, 2, 3, 4, 5}, r.items(), "6 waits behind the failed link")
		calls := r.callbacks()
		require.Len(t, calls, 2)
		require.Contains(t, calls[0], "catch: ")
		require.Equal(t, "finally", calls[1], "every job ran once: 6 is held behind 5")
		s := findBatch(t, b, id)
		require.Equal(t, 6, s.Total)
		require.Equal(t, 4, s.Pending)
		require.Equal(t, 3, s.Failed)
		require.False(t, s.Cancelled())

		n, err := runtime.NewInspector(b.engine).Batches().Retry(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.Equal(t, []int{1, 1, 2, 3, 3, 4, 5, 5, 6}, r.items())
		require.Equal(t, []string{calls[0], "finally", "then"}, r.callbacks(), "then runs once all succeeded; catch and finally ran once")
		s = findBatch(t, b, id)
		require.Equal(t, 0, s.Pending)
		require.Equal(t, 0, s.Failed)
		require.Empty(t, s.FailedIDs)
		require.True(t, s.Finished())
	})
}

func TestBatchCancel(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var r batchRun
		cb := r.register(t, b)
		id, err := withCallbacks(runtime.NewBatch(itemJob{N: 1}, itemJob{N: 2}, runtime.Chain(itemJob{N: 3}, itemJob{N: 4})), cb).Dispatch(b.ctx)
		require.NoError(t, err)
		require.NoError(t, runtime.NewInspector(b.engine).Batches().Cancel(b.ctx, id))
		require.NoError(t, runtime.NewInspector(b.engine).Batches().Cancel(b.ctx, id), "cancelling twice is fine")
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.Empty(t, r.items(), "no handler runs")
		require.Equal(t, []string{"finally"}, r.callbacks())
		s := findBatch(t, b, id)
		require.True(t, s.Cancelled())
		require.Equal(t, 0, s.Pending, "skipped jobs are settled")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
	})
}

func TestBatchAddFromJob(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var r batchRun
		cb := r.register(t, b)
		id, err := withCallbacks(runtime.NewBatch(itemJob{N: 1, AddMore: 3}), cb).OnQueue("items").Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"items"}, StopWhenEmpty: true})
		require.Equal(t, []int{1, 100, 101, 102}, r.items(), "added jobs go to the batch's queue")
		require.Equal(t, []string{"then", "finally"}, r.callbacks())
		s := findBatch(t, b, id)
		require.Equal(t, 4, s.Total)
		require.True(t, s.Finished())

		err = runtime.NewInspector(b.engine).Batches().Add(b.ctx, id, itemJob{N: 9})
		require.ErrorIs(t, err, runtime.ErrBatchFinished)
	})
}

func TestBatchErrors(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		bs := runtime.NewInspector(b.engine).Batches()
		_, ok, err := bs.Find(b.ctx, "01NOSUCHBATCH")
		require.NoError(t, err)
		require.False(t, ok)
		require.ErrorIs(t, bs.Cancel(b.ctx, "01NOSUCHBATCH"), runtime.ErrNoBatch)
		require.ErrorIs(t, bs.Add(b.ctx, "01NOSUCHBATCH", itemJob{}), runtime.ErrNoBatch)
		require.ErrorIs(t, bs.Cancel(b.ctx, "bad{id}"), runtime.ErrInvalid)

		_, err = runtime.NewBatch(runtime.NewPendingDispatch(itemJob{}).OnConnection("elsewhere")).Dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		_, err = runtime.NewBatch(itemJob{}).Then(runtime.CallbackRef{}).Dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		// A bad queue name is refused before the batch is written.
		_, err = runtime.NewBatch(itemJob{}, runtime.NewPendingDispatch(itemJob{}).OnQueue("a#b")).Dispatch(b.ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "batch job 2")
		list, err := bs.List(b.ctx, 0, 10)
		require.NoError(t, err)
		require.Empty(t, list, "no batch was written")
		var d recordingDispatcher
		_, err = runtime.NewBatch(itemJob{}).Dispatch(runtime.WithDispatcher(b.ctx, &d))
		require.ErrorIs(t, err, runtime.ErrInvalid, "a dispatcher that cannot take batches")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
	})
}

// TestBatchCountersExactAfterRedelivery: a worker runs every job of a
// batch and counts it, but none of its acks (nor the move of the failed
// job to the failed store) reaches Redis. Once the leases run out,
// another worker runs every job again. A failure counts only once the
// failed store has the job, so the first worker counts none. The counts
// stay exact, and each callback runs once.
func TestBatchCountersExactAfterRedelivery(t *testing.T) {
	forEachBusBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, be redistest.Backend) {
		var r batchRun
		cb := r.register(t, b)
		jobs := []runtime.Job{itemJob{N: 0, Fail: true}}
		for i := 1; i <= 10; i++ {
			jobs = append(jobs, itemJob{N: i})
		}
		jobs = append(jobs, runtime.Chain(itemJob{N: 11}, itemJob{N: 12}))
		id, err := withCallbacks(runtime.NewBatch(jobs...).AllowFailures(), cb).Dispatch(b.ctx)
		require.NoError(t, err)

		crashing := b.open(t, be, runtime.EngineConfig{})
		hook := &dropScripts{shas: map[string]bool{runtime.ScriptSHA("ack"): true, runtime.ScriptSHA("fail"): true}}
		crashing.Client().AddHook(hook)
		cfg := runtime.WorkerConfig{RetryAfter: 600 * time.Millisecond, Timeout: 500 * time.Millisecond, Sleep: 20 * time.Millisecond, Logger: quiet, Tries: 5}
		w1, err := runtime.NewWorker(crashing, b.router, cfg)
		require.NoError(t, err)
		ctx1, stop1 := context.WithCancel(b.ctx)
		done := make(chan error, 1)
		go func() { done <- w1.Run(ctx1) }()
		// Item 0 fails five times (its retries are releases, which get
		// through); the chain's second link runs once the first counted.
		eventually(t, func() bool { return len(r.items()) == 5+12 }, "every job runs")
		stop1()
		require.NoError(t, <-done)
		require.Positive(t, hook.n)
		s := findBatch(t, b, id)
		require.Equal(t, 13, s.Total)
		require.Equal(t, 1, s.Pending)
		require.Equal(t, 0, s.Failed, "a fail that never reached Redis counts nothing")
		require.Equal(t, int64(13), sizes(t, b.bundle, "default").Reserved, "nothing was acked or failed")

		_, stop2 := b.start(t, runtime.WorkerConfig{RetryAfter: cfg.RetryAfter, Timeout: cfg.Timeout, Tries: 5})
		eventually(t, func() bool { return sizes(t, b.bundle, "default") == runtime.Sizes{Failed: 1} }, "every job runs again and is settled")
		stop2()
		// Item 0 is over its tries and fails without running; item 11, a
		// chain link whose successor was pushed, is acked without running.
		require.Len(t, r.items(), 5+12+11, "the other jobs ran again")
		s = findBatch(t, b, id)
		require.Equal(t, 13, s.Total)
		require.Equal(t, 1, s.Pending, "redelivered successes counted once")
		require.Equal(t, 12, s.Processed())
		require.Equal(t, 1, s.Failed, "a redelivered failure counted once")
		calls := r.callbacks()
		require.Len(t, calls, 2)
		require.Contains(t, calls[0], "catch: ")
		require.Equal(t, "finally", calls[1])
	})
}

// TestBatchFinallyAfterCatch: when the last job of a batch ends while the
// catch callback claimed by an earlier failure still runs, finally waits
// for catch, and runs once, after it.
func TestBatchFinallyAfterCatch(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		catching := make(chan struct{})
		runtime.Register(b.router, "test.Item", func(ctx context.Context, j itemJob) error {
			if j.Fail {
				return fmt.Errorf("item %d failed", j.N)
			}
			select { // the other job ends while catch runs
			case <-catching:
			case <-time.After(10 * time.Second):
			}
			return nil
		})
		var mu sync.Mutex
		var calls []string
		cb := runtime.NewCallback("test.batch", func(ctx context.Context, kind string, o runtime.Outcome) error {
			mu.Lock()
			calls = append(calls, kind)
			mu.Unlock()
			if kind != "catch" {
				return nil
			}
			close(catching)
			// Wait for the other job to be acked: its worker has run
			// whatever callbacks it claimed by then.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if s, err := runtime.NewInspector(b.engine).Sizes(ctx, "default"); err == nil && s == (runtime.Sizes{Reserved: 1}) {
					break
				}
			}
			mu.Lock()
			calls = append(calls, "catch returned")
			mu.Unlock()
			return nil
		})
		runtime.RegisterCallback(b.router, cb)
		_, err := withCallbacks(runtime.NewBatch(itemJob{N: 1, Fail: true}, itemJob{N: 2}).AllowFailures(), cb).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 2})
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"catch", "catch returned", "finally"}, calls)
	})
}

// Batches are listed newest first, finished ones included, and a batch
// whose records are gone drops out of the list.
func TestBatchList(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var ids []string
		for i := range 3 {
			id, err := runtime.NewBatch(itemJob{N: i}).Name(fmt.Sprint("b", i)).Dispatch(b.ctx)
			require.NoError(t, err)
			ids = append(ids, id)
			time.Sleep(2 * time.Millisecond) // IDs order by their ms
		}
		list, err := runtime.NewInspector(b.engine).Batches().List(b.ctx, 0, 10)
		require.NoError(t, err)
		var got []string
		for _, s := range list {
			got = append(got, s.ID)
		}
		require.Equal(t, []string{ids[2], ids[1], ids[0]}, got)
		page, err := runtime.NewInspector(b.engine).Batches().List(b.ctx, 1, 1)
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, ids[1], page[0].ID)
		require.Equal(t, "b1", page[0].Name)

		// Finished, a batch is still listed.
		runtime.Register(b.router, "test.Item", func(context.Context, itemJob) error { return nil })
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"default"}, StopWhenEmpty: true})
		list, err = runtime.NewInspector(b.engine).Batches().List(b.ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, list, 3)
		require.True(t, list[0].Finished())

		// Its records expired, it is dropped from the list.
		require.NoError(t, b.rdb.Del(b.ctx, b.prefix+":{batch:"+ids[1]+"}:state").Err())
		list, err = runtime.NewInspector(b.engine).Batches().List(b.ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, list, 2)
		n, err := b.rdb.ZCard(b.ctx, b.prefix+":batches").Result()
		require.NoError(t, err)
		require.Equal(t, int64(2), n)

		_, err = runtime.NewInspector(b.engine).Batches().List(b.ctx, -1, 10)
		require.ErrorIs(t, err, runtime.ErrInvalid)

		// A job for a bad queue is refused before the batch counts it.
		err = runtime.NewInspector(b.engine).Batches().Add(b.ctx, ids[0], runtime.NewPendingDispatch(itemJob{}).OnQueue("a#b"))
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.Equal(t, 1, findBatch(t, b, ids[0]).Total)
	})
}
