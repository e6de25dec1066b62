package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// countScript counts the calls of script sha sent to Redis.
func countScript(b wbundle, sha string) *atomic.Int64 {
	var n atomic.Int64
	b.rdb.AddHook(beforeCalls(func(cmds ...redis.Cmder) {
		for _, c := range cmds {
			if runsScript(c, sha) {
				n.Add(1)
			}
		}
	}))
	return &n
}

func progressKey(b bundle, queue string) string { return b.prefix + ":{" + queue + "}:progress" }

// Many reports within a second reach Redis once at first, then the
// latest a second after; the job page shows the latest; the ack takes
// the entry away.
func TestProgressIsThrottled(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		writes := countScript(b, runtime.ScriptSHA("progress"))
		var mu sync.Mutex
		var took time.Duration
		reported := make(chan string, 1)
		finish := make(chan struct{})
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			start := time.Now()
			for i := range 50 {
				if err := runtime.Progress(ctx, i*2, fmt.Sprintf("step %d", i)); err != nil {
					return err
				}
				time.Sleep(5 * time.Millisecond)
			}
			mu.Lock()
			took = time.Since(start)
			mu.Unlock()
			reported <- info.ID
			<-finish
			return nil
		})
		b.dispatch(t, job(1, runtime.JobOptions{}))
		b.start(t, runtime.WorkerConfig{})
		id := <-reported

		in := runtime.NewInspector(b.engine)
		var first time.Time
		eventually(t, func() bool {
			j, ok, err := in.FindJob(b.ctx, "default", id)
			require.NoError(t, err)
			require.True(t, ok)
			if j.Progress != nil && first.IsZero() {
				first = j.Progress.At
			}
			return j.Progress != nil && j.Progress.Percent == 98
		}, "the latest report is written")
		j, _, err := in.FindJob(b.ctx, "default", id)
		require.NoError(t, err)
		require.Equal(t, runtime.JobProgress{Percent: 98, Note: "step 49", At: j.Progress.At, Attempt: 1}, *j.Progress)
		mu.Lock()
		bound := 1 + int64(took/time.Second) + 1 // the first at once, then at most one a second
		mu.Unlock()
		require.LessOrEqual(t, writes.Load(), bound, "50 reports in %v", took)
		require.GreaterOrEqual(t, writes.Load(), int64(1))

		close(finish)
		eventually(t, func() bool { return sizes(t, b.bundle, "default") == runtime.Sizes{} }, "the job is acked")
		require.Zero(t, b.rdb.Exists(b.ctx, progressKey(b.bundle, "default")).Val(), "the ack took the entry")
	})
}

func TestProgressRefusesBadInput(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		require.ErrorIs(t, runtime.Progress(b.ctx, 10, "x"), runtime.ErrInvalid, "not a job's context")
		errs := make(chan error, 2)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			errs <- runtime.Progress(ctx, 101, "")
			errs <- runtime.Progress(ctx, -1, "")
			return nil
		})
		b.dispatch(t, job(1, runtime.JobOptions{}))
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})
		require.ErrorIs(t, <-errs, runtime.ErrInvalid)
		require.ErrorIs(t, <-errs, runtime.ErrInvalid)
	})
}

// A cancelled job's entry goes with the cancel, and its handler can no
// longer write one: the write is fenced by the reservation's token.
func TestProgressOfACancelledJob(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		started := make(chan string, 1)
		late := make(chan error, 1)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			first := time.Now()
			if err := runtime.Progress(ctx, 10, "begun"); err != nil {
				return err
			}
			started <- info.ID
			<-ctx.Done()
			// Past the throttle, so that the next report is written in
			// the call and says what became of it.
			<-time.After(time.Until(first.Add(1100 * time.Millisecond)))
			late <- runtime.Progress(context.WithoutCancel(ctx), 50, "too late")
			return nil
		})
		b.dispatch(t, job(1, runtime.JobOptions{}))
		b.start(t, runtime.WorkerConfig{RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond})
		id := <-started
		in := runtime.NewInspector(b.engine)
		j, _, err := in.FindJob(b.ctx, "default", id)
		require.NoError(t, err)
		require.Equal(t, 10, j.Progress.Percent)
		require.Equal(t, "begun", j.Progress.Note)
		_, err = in.Cancel(b.ctx, "default", id, 1)
		require.NoError(t, err)
		require.ErrorIs(t, <-late, runtime.ErrLeaseLost)
		require.Zero(t, b.rdb.Exists(b.ctx, progressKey(b.bundle, "default")).Val())
	})
}
