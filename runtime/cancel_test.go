package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// blocker is a handler that waits for its context to end, and records
// when it ended and why.
type blocker struct {
	mu      sync.Mutex
	started map[string]int // job ID -> runs
	causes  map[string]error
}

func newBlocker() *blocker {
	return &blocker{started: map[string]int{}, causes: map[string]error{}}
}

func (bl *blocker) run(ctx context.Context) error {
	info, _ := runtime.JobInfoFrom(ctx)
	bl.mu.Lock()
	bl.started[info.ID]++
	bl.mu.Unlock()
	<-ctx.Done()
	bl.mu.Lock()
	bl.causes[info.ID] = context.Cause(ctx)
	bl.mu.Unlock()
	return ctx.Err()
}

func (bl *blocker) runs(id string) int {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	return bl.started[id]
}

func (bl *blocker) cause(id string) error {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	return bl.causes[id]
}

func TestCancelWaitingAndDelayed(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var ran []int
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			ran = append(ran, j.N)
			return nil
		})
		ids := b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{Delay: time.Hour}), job(3, runtime.JobOptions{}))
		in := runtime.NewInspector(b.engine)

		var stale *runtime.StaleCancelError
		_, err := in.Cancel(b.ctx, "default", ids[0], 1)
		require.ErrorAs(t, err, &stale, "a cancel of an attempt the job never made")
		require.Equal(t, 0, stale.Now)

		c, err := in.Cancel(b.ctx, "default", ids[0], 0)
		require.NoError(t, err)
		require.Equal(t, runtime.Cancelled{Was: runtime.StateReady}, c)
		c, err = in.Cancel(b.ctx, "default", ids[1], 0)
		require.NoError(t, err)
		require.Equal(t, runtime.Cancelled{Was: runtime.StateDelayed}, c)
		require.Equal(t, runtime.Sizes{Ready: 1, Failed: 2}, sizes(t, b.bundle, "default"))

		_, err = in.Cancel(b.ctx, "default", ids[0], 0)
		require.ErrorIs(t, err, runtime.ErrJobFailed, "cancelled already")
		_, err = in.Cancel(b.ctx, "default", "no-such-job", 0)
		require.ErrorIs(t, err, runtime.ErrNoJob)
		_, err = in.Cancel(b.ctx, "default", "", 0)
		require.ErrorIs(t, err, runtime.ErrInvalid)

		failed := b.failed(t, "default")
		require.Len(t, failed, 2)
		require.ElementsMatch(t, ids[:2], []string{failed[0].ID, failed[1].ID})
		for _, f := range failed {
			require.True(t, f.Cancelled)
			require.Equal(t, runtime.ErrCancelled.Error(), f.Error)
			env, err := runtime.DecodeEnvelope("default", f.ID, f.Payload)
			require.NoError(t, err, "the payload is kept, for a retry")
			require.Equal(t, "test.Job", env.Name)
		}

		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.Equal(t, []int{3}, ran, "cancelled jobs never run")

		// A cancelled job may be retried from the failed store.
		retried, err := in.Failed().Retry(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.Equal(t, []string{ids[0]}, retried)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.Equal(t, []int{3, 1}, ran)
	})
}

func TestCancelRunning(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		bl := newBlocker()
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return bl.run(ctx) })
		ids := b.dispatch(t, job(1, runtime.JobOptions{Tries: 5}))
		b.start(t, runtime.WorkerConfig{RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond, Tries: 5})
		eventually(t, func() bool { return bl.runs(ids[0]) == 1 }, "the job runs")

		in := runtime.NewInspector(b.engine)
		found, ok, err := in.FindJob(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, runtime.StateReserved, found.State)
		c, err := in.Cancel(b.ctx, "default", ids[0], found.Attempts)
		require.NoError(t, err)
		require.Equal(t, runtime.Cancelled{Was: runtime.StateReserved, Attempts: 1, Told: true}, c)

		eventually(t, func() bool { return bl.cause(ids[0]) != nil }, "the handler's context ends")
		var ce *runtime.CancelledError
		require.ErrorAs(t, bl.cause(ids[0]), &ce)
		require.ErrorIs(t, bl.cause(ids[0]), runtime.ErrCancelled)
		eventually(t, func() bool { return len(b.log.of(runtime.JobCancelled)) == 1 }, "JobCancelled is emitted")
		require.Equal(t, ids[0], b.log.of(runtime.JobCancelled)[0].ID)

		// Nothing of the attempt settles after the cancel: the job is in
		// the failed store, once, and does not come back.
		require.Empty(t, b.log.of(runtime.JobReleased))
		require.Empty(t, b.log.of(runtime.JobFailed))
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
		failed := b.failed(t, "default")
		require.Len(t, failed, 1)
		require.True(t, failed[0].Cancelled)
		require.Equal(t, 1, failed[0].Attempts)
		// Past the lease: a job that had been lost would have run again.
		ran := b.dispatch(t, job(2, runtime.JobOptions{}))
		eventually(t, func() bool { return bl.runs(ran[0]) == 1 }, "the worker goes on")
		require.Equal(t, 1, bl.runs(ids[0]), "a cancelled job is not retried")
	})
}

// A cancel names the attempt it saw: a job reserved again since is left
// alone, and a job settled first is not cancelled.
func TestCancelFencedByAttempt(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		br := runtime.NewBroker(b.engine)
		in := runtime.NewInspector(b.engine)
		require.NoError(t, b.engine.Push(b.ctx, env("q", "app.Job", "1")))
		first := mustReserve(t, b, "q", 1).Jobs[0]
		require.NoError(t, br.Release(b.ctx, runtime.ReleaseOpts{Exception: true}, first.Ref))
		second := mustReserve(t, b, "q", 1).Jobs[0]
		require.Equal(t, 2, second.Attempts)

		_, err := in.Cancel(b.ctx, "q", first.ID, first.Attempts)
		var stale *runtime.StaleCancelError
		require.ErrorAs(t, err, &stale)
		require.Equal(t, runtime.StaleCancelError{Queue: "q", ID: first.ID, Seen: 1, Now: 2}, *stale)
		require.ErrorIs(t, err, runtime.ErrStaleCancel)
		lost, err := br.Extend(b.ctx, time.Minute, second.Ref)
		require.NoError(t, err)
		require.Empty(t, lost, "the newer attempt still runs")

		// The job settles first: the cancel finds nothing.
		require.NoError(t, br.Ack(b.ctx, second.Ref))
		_, err = in.Cancel(b.ctx, "q", second.ID, second.Attempts)
		require.ErrorIs(t, err, runtime.ErrNoJob)
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "q"))

		// The cancel comes first: the worker's ack, release, fail and
		// extend are refused.
		require.NoError(t, b.engine.Push(b.ctx, env("q", "app.Job", "2")))
		r := mustReserve(t, b, "q", 1).Jobs[0]
		_, err = in.Cancel(b.ctx, "q", r.ID, r.Attempts)
		require.NoError(t, err)
		lost, err = br.Extend(b.ctx, time.Minute, r.Ref)
		require.NoError(t, err)
		require.Equal(t, []runtime.Ref{r.Ref}, lost)
		require.ErrorIs(t, br.Ack(b.ctx, r.Ref), runtime.ErrLeaseLost)
		require.ErrorIs(t, br.Release(b.ctx, runtime.ReleaseOpts{}, r.Ref), runtime.ErrLeaseLost)
		require.ErrorIs(t, br.Fail(b.ctx, runtime.Failure{Ref: r.Ref, Err: errors.New("late")}), runtime.ErrLeaseLost)
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b, "q"))
		f, ok, err := in.Failed().Get(b.ctx, "q", r.ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, f.Cancelled)
	})
}

// hooksLeft counts the entries of queue's hooks set: a cancel's is
// there until a worker's sweep ran the job's hooks.
func hooksLeft(t *testing.T, b wbundle, queue string) int64 {
	n, err := b.rdb.ZCard(b.ctx, b.prefix+":{"+queue+"}:hooks").Result()
	require.NoError(t, err)
	return n
}

// A cancelled chain link ends its chain.
func TestCancelStopsChain(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		bl := newBlocker()
		var mu sync.Mutex
		var ran []string
		runtime.Register(b.router, "test.Step", func(ctx context.Context, j stepJob) error {
			mu.Lock()
			ran = append(ran, j.Step)
			mu.Unlock()
			if j.Step == "a" {
				return bl.run(ctx)
			}
			return nil
		})
		b.start(t, runtime.WorkerConfig{RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond})
		in := runtime.NewInspector(b.engine)

		_, err := stepJob{Step: "a"}.withChain(stepJob{Step: "b"}).Dispatch(b.ctx)
		require.NoError(t, err)
		var aID string
		eventually(t, func() bool {
			jobs, _, err := in.ListJobs(b.ctx, "default", runtime.StateReserved, 0, 10)
			require.NoError(t, err)
			if len(jobs) == 1 {
				aID = jobs[0].ID
			}
			return aID != "" && bl.runs(aID) == 1
		}, "a runs")
		_, err = in.Cancel(b.ctx, "default", aID, 1)
		require.NoError(t, err)
		eventually(t, func() bool { return bl.cause(aID) != nil }, "a's context ends")
		eventually(t, func() bool { return hooksLeft(t, b, "default") == 0 }, "a sweep runs a's hooks")
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"a"}, ran, "the chain goes no further")
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b.bundle, "default"))
	})
}

// A batch counts a cancelled job as failed, as Laravel counts a job that
// failed for good: with AllowFailures the batch goes on, its catch runs
// with ErrCancelled, and its finally once the other jobs are done.
func TestCancelCountsInBatch(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var r batchRun
		cb := r.register(t, b)
		id, err := withCallbacks(runtime.NewBatch(itemJob{N: 1}, itemJob{N: 2}, itemJob{N: 3}).AllowFailures(), cb).Dispatch(b.ctx)
		require.NoError(t, err)
		in := runtime.NewInspector(b.engine)
		jobs, _, err := in.ListJobs(b.ctx, "default", runtime.StateReady, 0, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 3)
		_, err = in.Cancel(b.ctx, "default", jobs[1].ID, 0)
		require.NoError(t, err)

		b.start(t, runtime.WorkerConfig{RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond})
		eventually(t, func() bool { return hooksLeft(t, b, "default") == 0 && len(r.callbacks()) == 2 }, "the batch's callbacks run")
		s := findBatch(t, b, id)
		require.Equal(t, 1, s.Failed)
		require.Equal(t, []string{jobs[1].ID}, s.FailedIDs)
		require.Equal(t, 1, s.Pending, "the cancelled job is still pending, as a failed one")
		require.Equal(t, []int{1, 3}, r.items())
		require.Equal(t, []string{"catch: " + runtime.ErrCancelled.Error(), "finally"}, r.callbacks())
	})
}
