package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
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

// benchEngineWith is benchEngine with cfg (its Prefix set here).
func benchEngineWith(b *testing.B, cfg runtime.EngineConfig) (context.Context, *runtime.Engine) {
	b.Helper()
	ctx := context.Background()
	cfg.Prefix = redistest.Prefix(b)
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(b)+"/0", cfg)
	require.NoError(b, err)
	b.Cleanup(func() {
		rdb := e.Client()
		iter := rdb.Scan(ctx, 0, cfg.Prefix+":*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			_ = rdb.Unlink(ctx, keys...).Err()
		}
		_ = e.Close()
	})
	return ctx, e
}

// BenchmarkWorkerDrainKeepFinished is BenchmarkWorkerDrain (without
// prefetch) on a queue that keeps its finished jobs: every ack also
// writes the job's record and its runtime, through finish.lua.
func BenchmarkWorkerDrainKeepFinished(b *testing.B) {
	ctx, e := benchEngineWith(b, runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{benchQueue: {MaxJobs: 10_000}}})
	n := max(b.N, 1000)
	out := make([]runtime.Outgoing, 0, n)
	for range n {
		env := benchEnv()
		env.Body, _ = runtime.Encode(benchJob{})
		out = append(out, runtime.Outgoing{Envelope: env})
	}
	require.NoError(b, e.PushMany(ctx, out))
	r := runtime.NewRouter()
	runtime.Register(r, "bench.Job", func(context.Context, benchJob) error { return nil })
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{benchQueue}, Concurrency: 100, StopWhenEmpty: true, Logger: quiet})
	require.NoError(b, err)
	b.ResetTimer()
	require.NoError(b, w.Run(ctx))
	b.StopTimer()
	_, total, err := runtime.NewInspector(e).FinishedJobs(ctx, benchQueue, runtime.FinishedQuery{})
	require.NoError(b, err)
	require.Equal(b, int64(min(n, 10_000)), total)
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(float64(n)/sec, "jobs/s")
	}
}

// usedMemory is Redis's used_memory, in bytes.
func usedMemory(b *testing.B, ctx context.Context, e *runtime.Engine) int64 {
	b.Helper()
	info, err := e.Client().Info(ctx, "memory").Result()
	require.NoError(b, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(b, err)
			return n
		}
	}
	b.Fatal("no used_memory in INFO memory")
	return 0
}

// finishAll pushes n jobs, reserves them and finishes each with a result
// of size bytes (none for 0), and returns the change in Redis's
// used_memory from before the push.
func finishAll(b *testing.B, ctx context.Context, e *runtime.Engine, n, size int) int64 {
	b.Helper()
	out := make([]runtime.Outgoing, 0, n)
	for range n {
		out = append(out, runtime.Outgoing{Envelope: benchEnv()})
	}
	before := usedMemory(b, ctx, e)
	require.NoError(b, e.PushMany(ctx, out))
	br := runtime.NewBroker(e)
	var result []byte
	if size > 0 {
		result = make([]byte, size)
	}
	for done := 0; done < n; {
		got, err := br.Reserve(ctx, benchQueue, 1000, time.Minute)
		require.NoError(b, err)
		fins := make([]runtime.Finish, len(got.Jobs))
		for k, j := range got.Jobs {
			fins[k] = runtime.Finish{Ref: j.Ref, Result: result,
				Record: &runtime.FinishedJob{Name: "bench.Job", Attempts: 1, Worker: "bench-worker-1", StartedAt: time.Now(), Runtime: 1500 * time.Microsecond}}
		}
		require.NoError(b, br.Finish(ctx, fins...))
		done += len(got.Jobs)
	}
	s, err := runtime.NewInspector(e).Sizes(ctx, benchQueue)
	require.NoError(b, err)
	require.Zero(b, s.Total())
	return usedMemory(b, ctx, e) - before
}

// BenchmarkRetainedMemory measures what finished jobs leave in Redis:
// per job kept in the record of finished jobs (no result), and per job
// and per byte of a result (no record). One op is the whole
// measurement over 20,000 jobs; run it with -benchtime 1x.
func BenchmarkRetainedMemory(b *testing.B) {
	const n = 20_000
	for range b.N {
		ctx, e := benchEngineWith(b, runtime.EngineConfig{RetryWindow: -1, KeepFinished: map[string]runtime.FinishedConfig{benchQueue: {MaxJobs: n}}})
		b.ReportMetric(float64(finishAll(b, ctx, e, n, 0))/n, "B/finished-job")
		ctx, e = benchEngineWith(b, runtime.EngineConfig{RetryWindow: -1})
		small := finishAll(b, ctx, e, n, 10)
		ctx, e = benchEngineWith(b, runtime.EngineConfig{RetryWindow: -1})
		large := finishAll(b, ctx, e, n, 1010)
		b.ReportMetric(float64(small)/n, "B/result-of-10B")
		b.ReportMetric(float64(large-small)/n/1000, "B/result-byte")
	}
}
