package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ids := b.push(t, "mail", greet{}, greet{})
		out := b.ok(t, "queue:cancel", ids[0])
		require.Equal(t, fmt.Sprintf("Cancelled ready job %s of queue mail.\n", ids[0]), out)
		require.Equal(t, int64(1), b.sizes(t, "mail").Failed)
		require.Equal(t, int64(1), b.sizes(t, "mail").Ready)

		code, _, stderr := b.run(t, "queue:cancel", ids[0])
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: job "+ids[0]+" of queue mail is in the failed store already; nothing to cancel", oneLine(t, stderr))

		// A running job, as a worker holds it; a cancel naming an older
		// attempt leaves it alone.
		r, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, r.Jobs, 1)
		code, _, stderr = b.run(t, "queue:cancel", ids[1], "--attempt", "0")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: job "+ids[1]+" of queue mail is at attempt 1 now, not 0: it was reserved again; nothing changed", oneLine(t, stderr))
		out = b.ok(t, "queue:cancel", ids[1], "--queue", "mail")
		require.Equal(t, fmt.Sprintf("Cancelled running job %s of queue mail (attempt 1); its worker stops it at its next heartbeat.\n", ids[1]), out)
		require.ErrorIs(t, runtime.NewBroker(b.engine).Ack(b.ctx, r.Jobs[0].Ref), runtime.ErrLeaseLost)
		require.Equal(t, int64(2), b.sizes(t, "mail").Failed)

		code, _, stderr = b.run(t, "queue:cancel", "nope")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: no waiting, delayed or running job with ID nope (it may have finished)", oneLine(t, stderr))
		code, _, stderr = b.run(t, "queue:cancel")
		require.Equal(t, 2, code)
		oneLine(t, stderr)
	})
}

func TestJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ids := b.push(t, "mail", greet{})
		r, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{Delay: time.Hour, Exception: true}, r.Jobs[0].Ref))
		out := b.ok(t, "queue:job", ids[0])
		require.Contains(t, out, "Job       "+ids[0]+"\n")
		require.Contains(t, out, "Name      test.Greet\n")
		require.Contains(t, out, "State     delayed (due ")
		require.Contains(t, out, "Attempts  1 (1 exception)\n")

		_, err = runtime.NewInspector(b.engine).Cancel(b.ctx, "mail", ids[0], 1)
		require.NoError(t, err)
		out = b.ok(t, "queue:job", ids[0], "--queue", "mail")
		require.Contains(t, out, "State     failed, cancelled at ")
		require.Contains(t, out, "Error     job cancelled\n")

		code, _, stderr := b.run(t, "queue:job", "nope")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:job: no job with ID nope (it may have finished)", oneLine(t, stderr))
	})
}

// slowStep reports its progress, then waits for its test.
type slowStep struct{}

func (slowStep) JobName() string                { return "test.SlowStep" }
func (slowStep) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j slowStep) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// queue:job shows a running job's progress, and a failed job's
// attempts' errors.
func TestJobProgressAndErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		reported, finish := make(chan struct{}), make(chan struct{})
		runtime.Register(b.router, "test.SlowStep", func(ctx context.Context, j slowStep) error {
			if err := runtime.Progress(ctx, 40, "half\nway"); err != nil {
				return err
			}
			close(reported)
			<-finish
			return nil
		})
		slow := b.push(t, "work", slowStep{})
		failing := b.push(t, "work", boom{N: 7})
		w, err := runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{Queues: []string{"work"}, Sleep: 20 * time.Millisecond, Concurrency: 2,
			Backoff: []time.Duration{time.Millisecond}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		ctx, stop := context.WithCancel(b.ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		<-reported
		out := b.ok(t, "queue:job", slow[0])
		require.Regexp(t, `Progress  40% half; way \(at \S+, attempt 1\)\n`, out)
		close(finish)
		require.Eventually(t, func() bool { return b.sizes(t, "work").Failed == 1 }, 10*time.Second, 10*time.Millisecond)
		stop()
		require.NoError(t, <-done)

		out = b.ok(t, "queue:job", failing[0])
		require.Contains(t, out, "\nAttempts' errors:\n")
		require.Regexp(t, `  1  \S+  boom 7\n`, out)
		require.Regexp(t, `  2  \S+  .*boom 7\n`, out)
	})
}
