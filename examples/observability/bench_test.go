package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/jobgen/jobgen/internal/redistest"
	jobotel "github.com/jobgen/jobgen/otel"
	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// benchJob carries the time it was dispatched, in ns, for pickup latency.
type benchJob struct{ At int64 }

func (benchJob) JobName() string                { return "bench.Job" }
func (benchJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "bench"} }
func (j benchJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkDrain dispatches N jobs one by one to a running worker on a
// real Redis, and times until all have run, with the tracing and metrics
// integrations off, each alone, and both on (spans batched to an
// exporter that drops them, metrics scraped once at the end). It reports the
// median pickup latency, from dispatch to the handler's start.
//
//	go test ./examples/observability -run - -bench Drain -benchtime 5x -count 3
func BenchmarkDrain(b *testing.B) {
	for _, c := range []struct {
		name             string
		tracing, metrics bool
	}{{"off", false, false}, {"tracing", true, false}, {"metrics", false, true}, {"on", true, true}} {
		b.Run(c.name, func(b *testing.B) { benchDrain(b, c.tracing, c.metrics) })
	}
}

func benchDrain(b *testing.B, tracing, metrics bool) {
	const n = 2000
	ctx := context.Background()
	be := redistest.Backends(b)[0] // a real redis-server
	engine, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close()
	cfg := runtime.WorkerConfig{Queues: []string{"bench"}, Concurrency: 8, Sleep: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	var tr *jobotel.Tracing
	var m *jobprom.Metrics
	if tracing {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		defer tp.Shutdown(ctx) //nolint:errcheck // drops spans
		tr = jobotel.New(jobotel.Config{TracerProvider: tp, Propagator: propagation.TraceContext{}})
		tr.Instrument(engine, &cfg)
	}
	if metrics {
		m = jobprom.New(jobprom.Config{})
		m.Instrument(engine, &cfg)
	}
	var mu sync.Mutex
	var pickups []time.Duration
	var done sync.WaitGroup
	r := runtime.NewRouter()
	runtime.Register(r, "bench.Job", func(ctx context.Context, j benchJob) error {
		d := time.Since(time.Unix(0, j.At))
		mu.Lock()
		pickups = append(pickups, d)
		mu.Unlock()
		done.Done()
		return nil
	})
	w, err := runtime.NewWorker(engine, r, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if tracing {
		tr.Attach(w)
	}
	if metrics {
		m.Attach(w)
	}
	wctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	dctx := runtime.WithDispatcher(ctx, engine)

	for b.Loop() {
		done.Add(n)
		for range n {
			if _, err := runtime.Dispatch(dctx, benchJob{At: time.Now().UnixNano()}); err != nil {
				b.Fatal(err)
			}
		}
		done.Wait()
	}
	stop()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	if metrics { // a scrape, so the metrics are read as in production
		reg := prometheus.NewRegistry()
		reg.MustRegister(m, jobprom.NewQueueCollector(engine, []string{"bench"}))
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(pickups)
	b.ReportMetric(float64(pickups[len(pickups)/2].Microseconds()), "pickup-p50-µs")
	b.ReportMetric(float64(n), "jobs/op")
}
