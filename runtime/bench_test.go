package runtime_test

import (
	"context"
	"slices"
	"sync"
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
		require.NoError(b, e.PushBulk(ctx, out))
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

// BenchmarkPushBulk pushes b.N jobs in calls of 1,000: one op is one job.
func BenchmarkPushBulk(b *testing.B) {
	ctx, e := benchEngine(b)
	out := make([]runtime.Outgoing, 0, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; left -= len(out) {
		out = out[:0]
		for range min(1000, left) {
			out = append(out, runtime.Outgoing{Envelope: benchEnv()})
		}
		if err := e.PushBulk(ctx, out); err != nil {
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
		batch, err := e.Reserve(ctx, benchQueue, 100, time.Hour)
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
		batch, err := e.Reserve(ctx, benchQueue, 100, time.Hour)
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
		if err := e.Ack(ctx, refs...); err != nil {
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
		batch, err := e.Reserve(ctx, benchQueue, 100, time.Hour)
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
		if err := e.Ack(ctx, refs...); err != nil {
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

// picked is what the benchmark waiter reports of one reserved job.
type picked struct {
	at   time.Time     // local clock, when Reserve returned
	late time.Duration // Redis clock: reserved at minus due at
	seen bool          // whether the waiter saw the job's due time
}

// runWaiter runs a one-job-at-a-time worker loop on the benchmark queue
// until ctx is done: reserve, and if nothing is ready wait on the
// doorbell until the next delayed job falls due. It reports each job it
// reserves on out, then acks it.
func runWaiter(ctx context.Context, b *testing.B, e *runtime.Engine, out chan<- picked) {
	var due time.Time
	for ctx.Err() == nil {
		batch, err := e.Reserve(ctx, benchQueue, 1, time.Minute)
		if err != nil {
			if ctx.Err() == nil {
				b.Error(err)
			}
			return
		}
		if len(batch.Jobs) > 0 {
			p := picked{at: time.Now(), seen: !due.IsZero()}
			if p.seen {
				p.late = batch.Now.Sub(due)
			}
			due = time.Time{}
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
			if err := e.Ack(ctx, batch.Jobs[0].Ref); err != nil && ctx.Err() == nil {
				b.Error(err)
				return
			}
			continue
		}
		// A short timeout when nothing is due, so the loop notices ctx.
		timeout := 200 * time.Millisecond
		if !batch.NextDue.IsZero() {
			due = batch.NextDue
			timeout = min(timeout, due.Sub(batch.Now))
		}
		if _, err := e.Wait(ctx, []string{benchQueue}, timeout); err != nil && ctx.Err() == nil {
			b.Error(err)
			return
		}
	}
}

// startWaiter starts runWaiter and stops it when the benchmark ends.
func startWaiter(b *testing.B, ctx context.Context, e *runtime.Engine) <-chan picked {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan picked, 1)
	var wg sync.WaitGroup
	wg.Go(func() { runWaiter(ctx, b, e, out) })
	b.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return out
}

// BenchmarkPickupLatency measures how long a job takes from Push to being
// reserved by a worker blocked on the queue's doorbell. One op is one job
// pushed and picked up; p50-us and p99-us are the latency percentiles in
// microseconds.
func BenchmarkPickupLatency(b *testing.B) {
	ctx, e := benchEngine(b)
	got := startWaiter(b, ctx, e)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := e.Push(ctx, benchEnv()); err != nil {
			b.Fatal(err)
		}
		p := <-got
		lat = append(lat, p.at.Sub(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 50).Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(percentile(lat, 99).Nanoseconds())/1e3, "p99-us")
}

// BenchmarkDelayedLatency pushes jobs with a 20ms delay, one at a time, to
// a worker that waits for the next due time it learns from Reserve, and
// measures how late after its due time each job is reserved, by the Redis
// clock. p50-late-ms and p99-late-ms are the percentiles; unseen-jobs
// counts jobs reserved before the worker saw their due time (excluded).
func BenchmarkDelayedLatency(b *testing.B) {
	const delay = 20 * time.Millisecond
	ctx, e := benchEngine(b)
	got := startWaiter(b, ctx, e)
	late := make([]time.Duration, 0, b.N)
	unseen := 0
	b.ResetTimer()
	for range b.N {
		if err := e.Later(ctx, benchEnv(), delay); err != nil {
			b.Fatal(err)
		}
		p := <-got
		if !p.seen {
			unseen++
			continue
		}
		late = append(late, p.late)
	}
	b.StopTimer()
	if len(late) == 0 {
		b.Fatal("the waiter never saw a due time")
	}
	slices.Sort(late)
	if late[0] < 0 {
		b.Errorf("a job was reserved %v before it was due", -late[0])
	}
	b.ReportMetric(float64(percentile(late, 50).Microseconds())/1e3, "p50-late-ms")
	b.ReportMetric(float64(percentile(late, 99).Microseconds())/1e3, "p99-late-ms")
	b.ReportMetric(float64(unseen), "unseen-jobs")
}
