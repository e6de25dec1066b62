package main

import (
	"context"
	"io"
	"log/slog"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobgen/jobgen/internal/cputime"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

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

// counting is a span exporter that counts the spans it is given and
// drops them, so a benchmark can show that tracing was on.
type counting struct{ spans *atomic.Int64 }

func (c counting) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.spans.Add(int64(len(spans)))
	return nil
}
func (counting) Shutdown(context.Context) error { return nil }

// variant is one set-up the benchmarks compare. Tracing, when on, is
// the SDK sampling every span (or one trace in ten, in tracing-10pct),
// batched (the BatchSpanProcessor's defaults) to an exporter that drops
// them: what a program pays before its exporter's own cost. Its
// propagator is W3C trace context. tracing-noop is the integration with
// the API's no-op TracerProvider: its hooks and its own work, without
// the SDK (and without headers, as a no-op span has no context to
// inject).
type variant struct {
	name             string
	tracing, metrics bool
	sampler          sdktrace.Sampler // nil: every span
	noop             bool             // the no-op TracerProvider
}

var variants = []variant{
	{name: "off"},
	{name: "tracing", tracing: true},
	{name: "metrics", metrics: true},
	{name: "on", tracing: true, metrics: true},
	{name: "tracing-10pct", tracing: true, sampler: sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))},
	{name: "tracing-noop", tracing: true, noop: true},
}

// rig is one variant's engine and running worker; each handler call
// sends the job's pickup latency to started.
type rig struct {
	engine  *runtime.Engine
	ctx     context.Context // dispatches through engine
	started chan time.Duration
	spans   atomic.Int64
	close   func()
}

func newRig(b *testing.B, url string, v variant) *rig {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: redistest.Prefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	rg := &rig{engine: engine, ctx: runtime.WithDispatcher(ctx, engine), started: make(chan time.Duration, 4096)}
	cfg := runtime.WorkerConfig{Queues: []string{"bench"}, Concurrency: 8, Sleep: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	var tp *sdktrace.TracerProvider
	var tr *jobotel.Tracing
	var m *jobprom.Metrics
	if v.tracing {
		sampler := v.sampler
		if sampler == nil {
			sampler = sdktrace.AlwaysSample()
		}
		var provider trace.TracerProvider = noop.NewTracerProvider()
		if !v.noop {
			tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(counting{&rg.spans}))
			provider = tp
		}
		tr = jobotel.New(jobotel.Config{TracerProvider: provider, Propagator: propagation.TraceContext{}})
		tr.Instrument(engine, &cfg)
	}
	if v.metrics {
		m = jobprom.New(jobprom.Config{})
		m.Instrument(engine, &cfg)
	}
	r := runtime.NewRouter()
	runtime.Register(r, "bench.Job", func(ctx context.Context, j benchJob) error {
		rg.started <- time.Since(time.Unix(0, j.At))
		return nil
	})
	w, err := runtime.NewWorker(engine, r, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if tr != nil {
		tr.Attach(w)
	}
	if m != nil {
		m.Attach(w)
	}
	wctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	rg.close = func() {
		stop()
		if err := <-ran; err != nil {
			b.Fatal(err)
		}
		if m != nil { // a scrape, so the metrics are read as in production
			reg := prometheus.NewRegistry()
			reg.MustRegister(m, jobprom.NewQueueCollector(engine, []string{"bench"}))
			if _, err := reg.Gather(); err != nil {
				b.Fatal(err)
			}
		}
		if tp != nil {
			if err := tp.Shutdown(ctx); err != nil { // exports what the batcher holds
				b.Fatal(err)
			}
		}
		_ = engine.Close()
	}
	return rg
}

func (rg *rig) dispatch(b *testing.B) {
	if _, err := runtime.Dispatch(rg.ctx, benchJob{At: time.Now().UnixNano()}); err != nil {
		b.Fatal(err)
	}
}

// tally gathers one variant's figures over the rounds of a benchmark.
type tally struct {
	elapsed, cpu []time.Duration // per round
	pickups      []time.Duration
	jobs         int
	spans        int64
}

// rounds runs one round per benchmark iteration: every variant in turn,
// on a fresh rig after a GC, in an order that rotates each round so that
// drift in the machine's load falls on all of them alike. run does one
// variant's work and returns the pickup latencies of the jobs it ran.
//
// rounds reports, for each variant against off, the ratio of the pickup
// p50s and, if timed, the medians of the per-round ratios of the time
// run took (wall) and of this process's CPU time in it (cpu: the worker,
// the dispatcher and the span processor, not redis-server); the spans
// exported per job (2 when every span is sampled: a send and a process
// span; 0.2 expected at one trace in ten); and off's figures per job and
// each variant's pickup p50.
func rounds(b *testing.B, vs []variant, timed bool, run func(rg *rig) []time.Duration) {
	url := redistest.Backends(b)[0].URL // a real redis-server
	ts := make([]tally, len(vs))
	round := 0
	for b.Loop() {
		b.StopTimer()
		for k := range vs {
			i := (k + round) % len(vs)
			rg := newRig(b, url, vs[i])
			goruntime.GC()
			cpu0, _ := cputime.Process()
			start := time.Now()
			b.StartTimer()
			pickups := run(rg)
			b.StopTimer()
			elapsed := time.Since(start)
			cpu1, _ := cputime.Process()
			rg.close()
			t := &ts[i]
			t.elapsed, t.cpu = append(t.elapsed, elapsed), append(t.cpu, cpu1-cpu0)
			t.pickups = append(t.pickups, pickups...)
			t.jobs += len(pickups)
			t.spans += rg.spans.Load()
		}
		b.StartTimer()
		round++
	}
	ratio := func(t tally, per func(tally) []time.Duration) float64 {
		rs := make([]float64, round)
		for r := range round {
			rs[r] = float64(per(t)[r]) / float64(per(ts[0])[r])
		}
		return median(rs)
	}
	wall := func(t tally) []time.Duration { return t.elapsed }
	cpu := func(t tally) []time.Duration { return t.cpu }
	_, cpuErr := cputime.Process()
	hasCPU := cpuErr == nil
	for i, v := range vs {
		t := ts[i]
		b.ReportMetric(float64(median(t.pickups))/1e3, v.name+"-pickup-p50-µs")
		if i == 0 {
			if timed {
				perJob := float64(t.jobs / round)
				b.ReportMetric(float64(median(t.elapsed))/1e3/perJob, "off-wall-µs/job")
				if hasCPU {
					b.ReportMetric(float64(median(t.cpu))/1e3/perJob, "off-cpu-µs/job")
				}
			}
			continue
		}
		b.ReportMetric(float64(median(t.pickups))/float64(median(ts[0].pickups)), v.name+"/off-pickup-p50")
		if timed {
			b.ReportMetric(ratio(t, wall), v.name+"/off-wall")
			if hasCPU {
				b.ReportMetric(ratio(t, cpu), v.name+"/off-cpu")
			}
		}
		if v.tracing && !v.noop {
			b.ReportMetric(float64(t.spans)/float64(t.jobs), v.name+"-spans/job")
		}
	}
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkDrain dispatches 1000 jobs one by one to a running worker on a real Redis and times until all have run, with the
// tracing and metrics integrations off, each alone, and both on. Each
// iteration is one round of every variant; rounds tells what it
// reports. The pickup latency here is that of a busy worker.
//
//	go test ./examples/observability -run - -bench Drain -benchtime 15x
func BenchmarkDrain(b *testing.B) {
	const n = 1000
	rounds(b, variants, true, func(rg *rig) []time.Duration {
		for range n {
			rg.dispatch(b)
		}
		pickups := make([]time.Duration, n)
		for i := range pickups {
			pickups[i] = <-rg.started
		}
		return pickups
	})
}

// BenchmarkPickup dispatches 200 jobs one at a time to an idle worker,
// each once the one before has started and a millisecond has passed, so
// the worker is back waiting for work: the pickup latency, from
// dispatch to the handler's start, of a quiet queue. Each iteration is
// one round of every variant; rounds tells what it reports.
//
//	go test ./examples/observability -run - -bench Pickup -benchtime 15x
func BenchmarkPickup(b *testing.B) {
	const n = 200
	rounds(b, variants, false, func(rg *rig) []time.Duration {
		pickups := make([]time.Duration, n)
		for i := range pickups {
			rg.dispatch(b)
			pickups[i] = <-rg.started
			time.Sleep(time.Millisecond)
		}
		return pickups
	})
}
