package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// errorsKey is queue's errors hash, of jobs waiting for another attempt;
// failed is the failed store's.
func errorsKeys(b bundle, queue string) (live, failed string) {
	p := b.prefix + ":{" + queue + "}:"
	return p + "errors", p + "failed:errors"
}

func TestAttemptErrorsOfAFailedJob(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			if j.Tag == "once" && info.Attempt > 1 {
				return nil
			}
			if j.Tag == "long" {
				return fmt.Errorf("%s", strings.Repeat("é", 3000))
			}
			return fmt.Errorf("boom %d", info.Attempt)
		})
		ids := b.dispatch(t, job(1, runtime.JobOptions{Tries: 3}), tagged(2, "once", runtime.JobOptions{Tries: 3}),
			job(3, runtime.JobOptions{Tries: 13}), tagged(4, "long", runtime.JobOptions{Tries: 2}))
		_, stop := b.start(t, runtime.WorkerConfig{Backoff: []time.Duration{time.Millisecond}, Sleep: 10 * time.Millisecond})
		eventually(t, func() bool {
			s := sizes(t, b.bundle, "default")
			return s.Failed == 3 && s.Ready+s.Delayed+s.Reserved == 0
		}, "three jobs fail and one succeeds")
		stop()

		in := runtime.NewInspector(b.engine)
		f, ok, err := in.Failed().Get(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, f.Errors, 3)
		for i, e := range f.Errors {
			require.Equal(t, i+1, e.Attempt)
			require.False(t, e.At.IsZero())
			if i > 0 {
				require.False(t, e.At.Before(f.Errors[i-1].At))
			}
		}
		require.Equal(t, "boom 1", f.Errors[0].Error)
		require.Equal(t, "boom 2", f.Errors[1].Error)
		require.Equal(t, f.Error, f.Errors[2].Error, "the last is why it failed")
		require.Contains(t, f.Errors[2].Error, "boom 3")

		// At most the last 10 retried, then the one that failed.
		f, _, err = in.Failed().Get(b.ctx, "default", ids[2])
		require.NoError(t, err)
		require.Len(t, f.Errors, 11)
		require.Equal(t, 3, f.Errors[0].Attempt)
		require.Equal(t, "boom 3", f.Errors[0].Error)
		require.Equal(t, 13, f.Errors[10].Attempt)

		// Each message is cut, on a rune boundary.
		f, _, err = in.Failed().Get(b.ctx, "default", ids[3])
		require.NoError(t, err)
		require.LessOrEqual(t, len(f.Errors[0].Error), 1000)
		require.True(t, strings.HasSuffix(f.Errors[0].Error, "é…"), f.Errors[0].Error[len(f.Errors[0].Error)-10:])

		// A job that succeeded leaves nothing; the failed jobs' entries
		// go with them.
		live, failed := errorsKeys(b.bundle, "default")
		require.Zero(t, b.rdb.Exists(b.ctx, live).Val(), "acked and failed jobs took their entries")
		require.Equal(t, int64(3), b.rdb.HLen(b.ctx, failed).Val())
		_, err = in.Failed().Forget(b.ctx, "default", ids[0])
		require.NoError(t, err)
		_, err = in.Failed().Retry(b.ctx, "default", ids[2])
		require.NoError(t, err)
		require.Equal(t, []string{ids[3]}, b.rdb.HKeys(b.ctx, failed).Val())
		require.NoError(t, in.Failed().Flush(b.ctx, "default"))
		require.Zero(t, b.rdb.Exists(b.ctx, failed).Val())
	})
}

// A job waiting for its next attempt shows the errors so far; a cancel
// takes them to the failed store with it, and a clear deletes them.
func TestAttemptErrorsOfAWaitingJob(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		in := runtime.NewInspector(b.engine)
		require.NoError(t, b.engine.Push(b.ctx, env("q", "app.Job", "1")))
		r := mustReserve(t, b, "q", 1).Jobs[0]
		require.NoError(t, b.engine.ReleaseWithError(b.ctx, runtime.ReleaseOpts{Delay: time.Hour, Exception: true}, fmt.Errorf("first\x1ehalf"), r.Ref))
		j, ok, err := in.FindJob(b.ctx, "q", r.ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, runtime.StateDelayed, j.State)
		require.Len(t, j.Errors, 1)
		require.Equal(t, 1, j.Errors[0].Attempt)
		require.Equal(t, "first half", j.Errors[0].Error)

		_, err = in.Cancel(b.ctx, "q", r.ID, 1)
		require.NoError(t, err)
		f, _, err := in.Failed().Get(b.ctx, "q", r.ID)
		require.NoError(t, err)
		require.Len(t, f.Errors, 1, "a cancelled job keeps the errors it had, and no more")
		require.Equal(t, "first half", f.Errors[0].Error)

		require.NoError(t, b.engine.Push(b.ctx, env("q", "app.Job", "2")))
		r = mustReserve(t, b, "q", 1).Jobs[0]
		require.NoError(t, b.engine.ReleaseWithError(b.ctx, runtime.ReleaseOpts{}, fmt.Errorf("again"), r.Ref))
		live, _ := errorsKeys(b, "q")
		require.Equal(t, int64(1), b.rdb.HLen(b.ctx, live).Val())
		_, err = in.ClearQueue(b.ctx, "q")
		require.NoError(t, err)
		require.Zero(t, b.rdb.Exists(b.ctx, live).Val())
	})
}
