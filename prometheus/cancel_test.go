package jobprom_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A running job an operator cancels is counted once, as cancelled.
func TestCancelledCounter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		started := make(chan string, 1)
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error {
			started <- info.ID
			<-ctx.Done()
			return ctx.Err()
		})
		_, err := runtime.Dispatch(b.ctx, step{N: 1})
		require.NoError(t, err)
		cfg := runtime.WorkerConfig{Sleep: 20 * time.Millisecond, Name: "w1", RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		cfg.Middleware = append(cfg.Middleware, b.m.Middleware())
		w, err := runtime.NewWorker(b.engine, b.router, cfg)
		require.NoError(t, err)
		b.m.Attach(w)
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		id := <-started
		_, err = runtime.NewInspector(b.engine).Cancel(b.ctx, "default", id, 1)
		require.NoError(t, err)
		want := `
# HELP jobgen_jobs_cancelled_total Running jobs cancelled by an operator (runtime.JobCancelled); they went to the failed store.
# TYPE jobgen_jobs_cancelled_total counter
jobgen_jobs_cancelled_total{job="test.Step",queue="default"} 1
`
		require.Eventually(t, func() bool {
			return testutil.CollectAndCompare(b.m, strings.NewReader(want), "jobgen_jobs_cancelled_total") == nil
		}, 10*time.Second, 10*time.Millisecond)
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, testutil.CollectAndCompare(b.m, strings.NewReader(""), "jobgen_jobs_failed_total", "jobgen_jobs_retried_total"))
	})
}
