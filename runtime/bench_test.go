package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// The benchmarks run against the real redis-server only: the embedded
// server measures miniredis, not the engine.

const benchQueue = "bench"

// benchBody is the encoded job of every benchmark job: 64 bytes, about
// the size of a job holding a few IDs.
var benchBody = make([]byte, 64)

func benchEnv() *runtime.Envelope {
	return &runtime.Envelope{Name: "bench.Job", Queue: benchQueue, Body: benchBody}
}

// benchEngine opens an engine on the real server under a fresh prefix,
// and deletes that prefix's keys when the benchmark ends.
func benchEngine(b *testing.B) (context.Context, *runtime.Engine) {
	b.Helper()
	ctx := context.Background()
	prefix := redistest.Prefix(b)
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(b)+"/0", runtime.EngineConfig{Prefix: prefix})
	require.NoError(b, err)
	b.Cleanup(func() {
		rdb := e.Client()
		iter := rdb.Scan(ctx, 0, prefix+":*", 1000).Iterator()
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

// prePush pushes n jobs in bulk; callers do it before the timer starts.
func prePush(b *testing.B, ctx context.Context, e *runtime.Engine, n int) {
	b.Helper()
	const chunk = 5000
	out := make([]runtime.Outgoing, 0, chunk)
	for n > 0 {
		out = out[:0]
		for range min(chunk, n) {
			out = append(out, runtime.Outgoing{Envelope: benchEnv()})
		}
		require.NoError(b, e.PushMany(ctx, out))
		n -= len(out)
	}
}

func reportJobsPerSecond(b *testing.B, jobs int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(jobs)/s, "jobs/s")
	}
}

// BenchmarkPush pushes one job per call: one op is one job.
func BenchmarkPush(b *testing.B) {
	ctx, e := benchEngine(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := e.Push(ctx, benchEnv()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, b.N)
}

// pushProducers is the number of goroutines BenchmarkPushParallel pushes
// from, as the bench/ harness's producers do.
const pushProducers = 8

// BenchmarkPushParallel pushes one job per call from 8 goroutines at once
// on one engine: one op is one job; jobs/s counts all callers together.
func BenchmarkPushParallel(b *testing.B) {
	ctx, e := benchEngine(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range pushProducers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := e.Push(ctx, benchEnv()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportJobsPerSecond(b, b.N)
}

// BenchmarkPushMany pushes b.N jobs in calls of 1,000: one op is one job.
func BenchmarkPushMany(b *testing.B) {
	ctx, e := benchEngine(b)
	out := make([]runtime.Outgoing, 0, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; left -= len(out) {
		out = out[:0]
		for range min(1000, left) {
			out = append(out, runtime.Outgoing{Envelope: benchEnv()})
		}
		if err := e.PushMany(ctx, out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, b.N)
}

// BenchmarkReserveBatch100 reserves ready jobs 100 at a time: one op is
// one Reserve of 100 jobs.
func BenchmarkReserveBatch100(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100*b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if len(batch.Jobs) != 100 {
			b.Fatalf("reserved %d jobs, want 100", len(batch.Jobs))
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}

// BenchmarkReserveBatch100Limited is BenchmarkReserveBatch100 on a queue
// with a concurrency limit and a rate too high to bind: what checking
// them costs a reserve (docs/flow-control.md).
func BenchmarkReserveBatch100Limited(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100*b.N)
	in := runtime.NewInspector(e)
	if err := in.SetQueueLimit(ctx, benchQueue, 100*b.N+100); err != nil {
		b.Fatal(err)
	}
	if err := in.SetQueueRate(ctx, benchQueue, 100*b.N+100, time.Hour); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if len(batch.Jobs) != 100 {
			b.Fatalf("reserved %d jobs, want 100", len(batch.Jobs))
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}

// BenchmarkAck acks reserved jobs 100 at a time: one op is one Ack of 100
// jobs.
func BenchmarkAck(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100*b.N)
	batches := make([][]runtime.Ref, b.N)
	for i := range batches {
		batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
		require.NoError(b, err)
		require.Len(b, batch.Jobs, 100)
		refs := make([]runtime.Ref, len(batch.Jobs))
		for k, j := range batch.Jobs {
			refs[k] = j.Ref
		}
		batches[i] = refs
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, refs := range batches {
		if err := runtime.NewBroker(e).Ack(ctx, refs...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}

// BenchmarkReserveAckBatch100 is a worker's round: reserve 100 jobs, then
// ack them. One op is one reserve and one ack of 100 jobs.
func BenchmarkReserveAckBatch100(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100*b.N)
	refs := make([]runtime.Ref, 0, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if len(batch.Jobs) != 100 {
			b.Fatalf("reserved %d jobs, want 100", len(batch.Jobs))
		}
		refs = refs[:0]
		for _, j := range batch.Jobs {
			refs = append(refs, j.Ref)
		}
		if err := runtime.NewBroker(e).Ack(ctx, refs...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted.
func percentile[T any](sorted []T, p float64) T {
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BenchmarkReserveAckParallel is several workers' rounds at once against
// one Redis: each reserves 100 jobs, then acks them, so the reserved set
// stays as small as a real worker keeps it. One op is one round of 100;
// jobs/s counts jobs reserved (and acked) by all callers together.
func BenchmarkReserveAckParallel(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100*b.N+100*16)
	b.SetParallelism(2) // 2 x GOMAXPROCS callers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
			if err != nil {
				b.Error(err)
				return
			}
			refs := make([]runtime.Ref, len(batch.Jobs))
			for i, j := range batch.Jobs {
				refs[i] = j.Ref
			}
			if err := runtime.NewBroker(e).Ack(ctx, refs...); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}

// BenchmarkReserveParallel reserves ready jobs 100 at a time from several
// callers at once, as a pool of workers does against one Redis. One op is
// one Reserve of 100 jobs; jobs/s counts all callers together.
func BenchmarkReserveParallel(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100*b.N)
	b.SetParallelism(2) // 2 x GOMAXPROCS callers
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
			if err != nil {
				b.Error(err)
				return
			}
			if len(batch.Jobs) != 100 {
				b.Errorf("reserved %d jobs, want 100", len(batch.Jobs))
				return
			}
		}
	})
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}
