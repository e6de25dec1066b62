package runtime_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// TestBrokenQueueStarvesNone: a queue one of whose keys holds another
// type (SET by hand) comes first in the worker's queues. The worker
// serves the queue after it all the same, idle or busy, says once that it
// skips the broken one, and serves the broken one again once it is
// mended.
func TestBrokenQueueStarvesNone(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		ran := make(chan string, 10)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			ran <- info.Queue
			return nil
		})
		broken := b.prefix + ":{broken}:ready"
		require.NoError(t, b.rdb.Set(b.ctx, broken, "oops", 0).Err())
		b.dispatch(t, job(1, runtime.JobOptions{Queue: "default"}))

		var logs syncBuffer
		cfg := runtime.WorkerConfig{Queues: []string{"broken", "default"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		_, stop := b.start(t, cfg)
		defer stop()
		require.Equal(t, "default", waitFor(t, ran), "the job behind the broken queue runs")

		b.dispatch(t, job(2, runtime.JobOptions{Queue: "default"})) // to a worker now idle
		require.Equal(t, "default", waitFor(t, ran))
		require.Equal(t, 1, strings.Count(logs.String(), "queue skipped"), "the broken queue is reported once:\n%s", logs.String())
		require.Contains(t, logs.String(), "WRONGTYPE")

		require.NoError(t, b.rdb.Del(b.ctx, broken).Err())
		b.dispatch(t, job(3, runtime.JobOptions{Queue: "broken"}))
		require.Equal(t, "broken", waitFor(t, ran), "the mended queue is served again")
		require.Contains(t, logs.String(), "queue served again")
	})
}

func waitFor(t *testing.T, ran chan string) string {
	t.Helper()
	select {
	case q := <-ran:
		return q
	case <-time.After(15 * time.Second):
		t.Fatal("no job ran")
		return ""
	}
}
