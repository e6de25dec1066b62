package jobotel_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	jobotel "github.com/jobgen/jobgen/otel"
	"github.com/jobgen/jobgen/runtime"
)

// A running job an operator cancels ends its span with the outcome
// cancelled, and no error status.
func TestCancelledSpan(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error {
			<-ctx.Done()
			return ctx.Err()
		})
		_, err := runtime.Dispatch(b.ctx, step{N: 1})
		require.NoError(t, err)
		cfg := runtime.WorkerConfig{Sleep: 20 * time.Millisecond, Name: "w1",
			RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		cfg.Middleware = append(cfg.Middleware, b.tr.Middleware())
		w, err := runtime.NewWorker(b.engine, b.router, cfg)
		require.NoError(t, err)
		b.tr.Attach(w)
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		require.Eventually(t, func() bool { return b.id(1) != "" }, 10*time.Second, 5*time.Millisecond)
		_, err = runtime.NewInspector(b.engine).Cancel(b.ctx, "default", b.id(1), 1)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return len(b.process(b.id(1))) == 1 }, 10*time.Second, 5*time.Millisecond, "the span ends")
		cancel()
		require.NoError(t, <-done)

		procs := b.process(b.id(1))
		require.Equal(t, jobotel.OutcomeCancelled, attr(procs[0], "jobgen.outcome"))
		require.Equal(t, codes.Unset, procs[0].Status.Code)
	})
}
