package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// BenchmarkAwait is the round trip of one job through a running worker:
// dispatch, run a handler that returns a result at once, ack, and the
// Await that wakes on the ack. ns/op is the latency a caller sees.
func BenchmarkAwait(b *testing.B) {
	ctx, e := benchEngine(b)
	r := runtime.NewRouter()
	runtime.RegisterResult(r, "test.Result", func(ctx context.Context, j resultJob) (receipt, error) {
		return receipt{N: j.N, Doubled: 2 * j.N}, nil
	})
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"default"}, Concurrency: 4,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(b, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()
	ctx = runtime.WithDispatcher(ctx, e)
	b.ResetTimer()
	for i := range b.N {
		id, err := runtime.Dispatch(ctx, resultJob{N: i})
		require.NoError(b, err)
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		got, err := runtime.Await[receipt](actx, resultJob{}, id)
		cancel()
		require.NoError(b, err)
		require.Equal(b, 2*i, got.Doubled)
	}
}
