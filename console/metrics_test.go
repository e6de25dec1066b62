package console_test

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestMetrics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		require.Equal(t, "No job finished in the last day on a queue that keeps finished jobs (EngineConfig.KeepFinished).\n", b.ok(t, "queue:metrics"))
		// A worker whose engine keeps the finished jobs of "timed".
		e, err := runtime.Open(b.ctx, b.url, runtime.EngineConfig{Prefix: b.prefix, KeepFinished: map[string]runtime.FinishedConfig{"timed": {}}})
		require.NoError(t, err)
		defer e.Close()
		r := runtime.NewRouter()
		runtime.Register(r, "test.Greet", func(ctx context.Context, j greet) error {
			time.Sleep(10 * time.Millisecond)
			return nil
		})
		b.push(t, "timed", greet{"a"}, greet{"b"}, greet{"c"})
		w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"timed"}, StopWhenEmpty: true,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		require.NoError(t, w.Run(b.ctx))
		out := b.ok(t, "queue:metrics", "timed")
		require.Regexp(t, regexp.MustCompile(`(?m)^QUEUE +JOB +HOUR JOBS +HOUR/MIN +HOUR P50 +HOUR P95 +DAY JOBS`), out)
		require.Regexp(t, regexp.MustCompile(`(?m)^timed +test\.Greet +3 +\d+\.\d\d +\d+(\.\d+)?ms +\d+(\.\d+)?ms +3 `), out)
	})
}
