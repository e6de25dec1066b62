package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// TestDispatchMany dispatches 1,200 jobs (three push calls) with one of
// them too large: that one is reported by index, the others are queued
// with their IDs and run.
func TestDispatchMany(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		const n = 1200
		jobs := make([]testJob, n)
		for i := range jobs {
			jobs[i] = job(i, runtime.JobOptions{Queue: "bulk"})
		}
		jobs[700].Tag = strings.Repeat("x", 2<<20) // past the 1 MiB default cap
		ids, err := runtime.DispatchMany(b.ctx, jobs)
		var be *runtime.DispatchManyError
		require.ErrorAs(t, err, &be)
		require.Equal(t, []int{700}, be.Failed())
		var tooLarge *runtime.PayloadTooLargeError
		require.ErrorAs(t, err, &tooLarge)
		require.Len(t, ids, n)
		require.Empty(t, ids[700])
		require.NotEmpty(t, ids[0])
		require.NotEmpty(t, ids[n-1])

		sizes, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "bulk")
		require.NoError(t, err)
		require.EqualValues(t, n-1, sizes.Ready)

		var mu sync.Mutex
		seen := map[int]bool{}
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			mu.Lock()
			seen[j.N] = true
			mu.Unlock()
			return nil
		})
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"bulk"}, StopWhenEmpty: true, Concurrency: 8})
		require.Len(t, seen, n-1)
		require.False(t, seen[700])
	})
}

// TestDispatchManyOverrides: the queue and delay apply to every job.
func TestDispatchManyOverrides(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		jobs := []testJob{job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{Queue: "a"})}
		ids, err := runtime.NewPendingMany(jobs).OnQueue("many").Delay(3600e9).Dispatch(b.ctx)
		require.NoError(t, err)
		require.Len(t, ids, 2)
		sizes, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "many")
		require.NoError(t, err)
		require.EqualValues(t, 2, sizes.Delayed)

		_, err = runtime.NewPendingMany(jobs).OnQueue("bad{queue}").Dispatch(b.ctx)
		var be *runtime.DispatchManyError
		require.ErrorAs(t, err, &be)
		require.Equal(t, []int{0, 1}, be.Failed())
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}

// TestDispatchManyPushError: a push call Redis refuses fails the jobs of
// that call only.
func TestDispatchManyPushError(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		require.NoError(t, b.rdb.Set(b.ctx, b.prefix+":{broken}:ready", "x", 0).Err())
		jobs := []testJob{onQueue(1, "fine"), onQueue(2, "broken"), onQueue(3, "fine")}
		ids, err := runtime.DispatchMany(b.ctx, jobs)
		var be *runtime.DispatchManyError
		require.ErrorAs(t, err, &be)
		require.Equal(t, []int{1}, be.Failed())
		require.NotEmpty(t, ids[0])
		require.Empty(t, ids[1])
		require.NotEmpty(t, ids[2])
		sizes, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "fine")
		require.NoError(t, err)
		require.EqualValues(t, 2, sizes.Ready)
	})
}

// TestPushRaw pushes jobs by name: one whose body decodes runs; one whose
// body does not fails at once with ErrDecode.
func TestPushRaw(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		var got []testJob
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			mu.Lock()
			got = append(got, j)
			mu.Unlock()
			return nil
		})
		body, err := runtime.Encode(testJob{N: 7, Tag: "raw"})
		require.NoError(t, err)
		_, err = runtime.PushRaw(b.ctx, "raw", "test.Job", body)
		require.NoError(t, err)
		badID, err := runtime.PushRaw(b.ctx, "raw", "test.Job", []byte{0xc1})
		require.NoError(t, err)
		_, err = runtime.PushRaw(b.ctx, "raw", "", body)
		require.ErrorIs(t, err, runtime.ErrInvalid)

		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"raw"}, StopWhenEmpty: true, Tries: 3})
		require.Equal(t, []testJob{{N: 7, Tag: "raw"}}, got)
		failed := b.failed(t, "raw")
		require.Len(t, failed, 1)
		require.Equal(t, badID, failed[0].ID)
		require.Equal(t, 1, failed[0].Attempts, "a body that does not decode is not retried")
		require.Contains(t, failed[0].Error, runtime.ErrDecode.Error())
	})
}
