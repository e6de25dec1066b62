package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// reportJob is unique per day, for UniqueFor.
type reportJob struct {
	Day       string
	Fail      bool
	UniqueFor time.Duration `msgpack:"-"`
}

func (reportJob) JobName() string { return "test.Report" }
func (j reportJob) JobOptions() runtime.JobOptions {
	if j.UniqueFor == 0 {
		j.UniqueFor = time.Minute
	}
	return runtime.JobOptions{UniqueFor: j.UniqueFor}
}
func (j reportJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }
func (j reportJob) UniqueID() string           { return j.Day }

// feedJob is unique until it starts processing.
type feedJob struct{ Feed string }

func (feedJob) JobName() string { return "test.Feed" }
func (feedJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{UniqueFor: time.Minute}
}
func (j feedJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }
func (j feedJob) UniqueID() string           { return j.Feed }
func (feedJob) UniqueUntilProcessing() bool  { return true }

func TestUniqueDuplicate(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		id, err := runtime.Dispatch(b.ctx, reportJob{Day: "mon"})
		require.NoError(t, err)

		_, err = runtime.Dispatch(b.ctx, reportJob{Day: "mon"})
		require.ErrorIs(t, err, runtime.ErrDuplicate)
		require.NotErrorIs(t, err, runtime.ErrIDTaken)
		var dup *runtime.DuplicateError
		require.ErrorAs(t, err, &dup)
		require.Equal(t, "*runtime.DuplicateError", fmt.Sprintf("%T", dup), "the public type, not an internal one")
		require.Equal(t, runtime.DuplicateError{Name: "test.Report", Key: "test.Report:mon", HolderID: id}, *dup)

		res, err := runtime.ResultOf(runtime.Dispatch(b.ctx, reportJob{Day: "mon"}))
		require.NoError(t, err)
		require.Equal(t, runtime.DispatchResult{ID: id, Duplicate: true}, res)

		res, err = runtime.ResultOf(runtime.Dispatch(b.ctx, reportJob{Day: "tue"}))
		require.NoError(t, err)
		require.False(t, res.Duplicate)
		require.NotEqual(t, id, res.ID)
		require.Equal(t, int64(2), sizes(t, b.bundle, "default").Ready)
	})
}

func TestUniqueReleasedWhenJobEnds(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Report", func(ctx context.Context, j reportJob) error {
			if j.Fail {
				return errors.New("no data")
			}
			return nil
		})
		b.dispatch(t, reportJob{Day: "mon"}, reportJob{Day: "bad", Fail: true})
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.Len(t, b.failed(t, "default"), 1)
		// Both locks are free again: after a success and after a failure.
		b.dispatch(t, reportJob{Day: "mon"}, reportJob{Day: "bad"})
	})
}

func TestUniqueKeptAcrossRetries(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		var dups []error
		runtime.Register(b.router, "test.Report", func(ctx context.Context, j reportJob) error {
			_, err := runtime.Dispatch(b.ctx, reportJob{Day: j.Day})
			mu.Lock()
			dups = append(dups, err)
			mu.Unlock()
			if info, _ := runtime.JobInfoFrom(ctx); info.Attempt == 1 {
				return errors.New("try again")
			}
			return nil
		})
		b.dispatch(t, reportJob{Day: "mon"})
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Tries: 2})
		require.Len(t, dups, 2)
		for _, err := range dups {
			require.ErrorIs(t, err, runtime.ErrDuplicate, "the lock is held while the job runs and between its tries")
		}
		b.dispatch(t, reportJob{Day: "mon"})
	})
}

func TestUniqueUntilProcessing(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Feed", func(ctx context.Context, j feedJob) error {
			rec.add(ctx, j.Feed)
			if len(rec.list()) == 1 {
				// The lock went when this job started: a new copy queues.
				_, err := runtime.Dispatch(b.ctx, feedJob{Feed: j.Feed})
				return err
			}
			return nil
		})
		b.dispatch(t, feedJob{Feed: "news"})
		_, err := runtime.Dispatch(b.ctx, feedJob{Feed: "news"})
		require.ErrorIs(t, err, runtime.ErrDuplicate, "held while queued")
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 1})
		require.Equal(t, []string{"news", "news"}, rec.list())
	})
}

// TestUniqueLockExpiresAfterWorkerDies: a worker takes a unique job and
// dies without finishing it; the lock expires UniqueFor after the
// dispatch, and a new copy can be queued.
func TestUniqueLockExpiresAfterWorkerDies(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		const uniqueFor = 400 * time.Millisecond
		b.dispatch(t, reportJob{Day: "mon", UniqueFor: uniqueFor})
		dispatched := time.Now()
		// The dead worker: it reserved the job and will never settle it.
		require.Len(t, mustReserve(t, b.bundle, "default", 1).Jobs, 1)
		_, err := runtime.Dispatch(b.ctx, reportJob{Day: "mon", UniqueFor: uniqueFor})
		require.ErrorIs(t, err, runtime.ErrDuplicate)
		eventually(t, func() bool {
			_, err := runtime.Dispatch(b.ctx, reportJob{Day: "mon", UniqueFor: uniqueFor})
			return err == nil
		}, "the lock expires")
		require.GreaterOrEqual(t, time.Since(dispatched), uniqueFor-50*time.Millisecond, "not before UniqueFor")
	})
}

// TestUniqueLockGivenBackWhenPushFails: a dispatch that takes the lock
// and then cannot push leaves the lock free.
func TestUniqueLockGivenBackWhenPushFails(t *testing.T) {
	forEachBusBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, be redistest.Backend) {
		small := b.open(t, be, runtime.EngineConfig{MaxPayload: 10})
		_, err := runtime.Dispatch(runtime.WithDispatcher(b.ctx, small), reportJob{Day: "a long day name, over ten bytes"})
		require.ErrorIs(t, err, runtime.ErrPayloadTooLarge)
		b.dispatch(t, reportJob{Day: "a long day name, over ten bytes"})
	})
}
