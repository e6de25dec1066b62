package laravel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
)

// The benchmarks run against the real redis-server only: the embedded
// server measures miniredis, not the queue.

// benchQueue opens a connection on the real server under a fresh prefix
// and pushes n jobs of Laravel's shape, each about 230 bytes, then
// deletes the prefix's keys when the benchmark ends.
func benchQueue(b *testing.B, n int) (context.Context, *laravel.Queue) {
	b.Helper()
	ctx := context.Background()
	prefix := redistest.Prefix(b) + "_laravel_database_"
	q, closer, err := laravel.Open(ctx, laravel.Scheme+"redis://"+redistest.Addr(b)+"/0?prefix="+prefix)
	require.NoError(b, err)
	b.Cleanup(func() {
		rdb := q.Client()
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			_ = rdb.Unlink(ctx, keys...).Err()
		}
		_ = closer()
	})
	jobs := make([][]byte, n)
	for i := range jobs {
		jobs[i] = payload(fmt.Sprint(i))
	}
	require.NoError(b, q.Push(ctx, "default", jobs...))
	return ctx, q
}

func reportPopsPerSecond(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "pops/s")
	}
}

// BenchmarkPop: one popper takes b.N jobs, each a Pop (migrate, then
// reserve) as a worker does it.
func BenchmarkPop(b *testing.B) {
	ctx, q := benchQueue(b, b.N)
	b.ResetTimer()
	for range b.N {
		r, err := q.Pop(ctx, "default")
		if err != nil || r == nil {
			b.Fatalf("pop: %v, %v", r, err)
		}
	}
	b.StopTimer()
	reportPopsPerSecond(b)
}

// BenchmarkPopParallel: eight poppers per CPU share one queue, as a
// worker's goroutines do.
func BenchmarkPopParallel(b *testing.B) {
	ctx, q := benchQueue(b, b.N)
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := q.Pop(ctx, "default")
			if err != nil || r == nil {
				b.Errorf("pop: %v, %v", r, err)
				return
			}
		}
	})
	b.StopTimer()
	reportPopsPerSecond(b)
}

// BenchmarkPHPOnly is what a Go worker adds to each pop to tell whether
// the first job is its to run (Worker.takes): its class mapped, and
// neither a link of a chain Go cannot finish nor a job of a batch, which
// reads the serialized command.
func BenchmarkPHPOnly(b *testing.B) {
	m := newMapper()
	p, err := laravel.DecodePayload(benchJob)
	require.NoError(b, err)
	cmd, _ := p.Command()
	_, err = laravel.DecodeCommand[SendWelcomeEmail](cmd.Command, cmd.CommandName)
	require.NoError(b, err, "the command is PHP's serialize() of the job")
	for b.Loop() {
		if err := laravel.PHPOnly(m, benchJob); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassOf is what a Go worker adds to each pop to tell whether
// the first job is of a class it has a Go type for (Worker.takes).
func BenchmarkClassOf(b *testing.B) {
	m := newMapper()
	job := benchJob
	for b.Loop() {
		if _, unmapped := laravel.ClassOf(m, job); unmapped {
			b.Fatal("mapped class reported unmapped")
		}
	}
}

// benchJob is a payload of a mapped class, as Laravel 8 pushes it.
var benchJob = []byte(`{"uuid":"6f1c0a3e-2b7d-4c55-9a1e-5d2f8c3b7e10","displayName":"App\\Jobs\\SendWelcomeEmail","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"App\\Jobs\\SendWelcomeEmail","command":"O:25:\"App\\Jobs\\SendWelcomeEmail\":3:{s:6:\"userId\";i:7;s:8:\"\u0000*\u0000email\";s:15:\"ada@example.com\";s:31:\"\u0000App\\Jobs\\SendWelcomeEmail\u0000tags\";a:1:{i:0;s:7:\"welcome\";}}"},"id":"k3J9x0QwErTyUiOpAsDfGhJkLzXcVbNm","attempts":0}`)
