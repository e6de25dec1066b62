package jobotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobgen/jobgen/internal/cputime"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	jobotel "github.com/jobgen/jobgen/otel"
	"github.com/jobgen/jobgen/runtime"
)

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// benchProviders are the SDK set-ups the benchmarks compare: every span
// sampled, and one in ten, each batched to an exporter that drops it.
var benchProviders = []struct {
	name    string
	sampler sdktrace.Sampler
}{
	{"always", sdktrace.AlwaysSample()},
	{"ratio0.1", sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))},
}

// BenchmarkJob times what tracing adds to one job, without Redis: the
// send span of its Dispatch (with the header injection), and the process
// span of its attempt (extraction, link, start, and the end by its
// JobProcessed event). cpu-ns/op is the process's CPU time, the span
// processor's goroutine and the GC included.
//
//	go test ./otel -run - -bench . -benchmem
func BenchmarkJob(b *testing.B) {
	for _, p := range benchProviders {
		b.Run(p.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(p.sampler), sdktrace.WithBatcher(discard{}))
			defer tp.Shutdown(context.Background()) //nolint:errcheck // drops spans
			tr := jobotel.New(jobotel.Config{TracerProvider: tp, Propagator: propagation.TraceContext{}})
			mw := tr.Middleware()
			ctx := context.Background()
			next := func(context.Context) error { return nil }
			env, err := runtime.NewPendingDispatch(step{N: 1}).OnQueue("bench").Envelope()
			if err != nil {
				b.Fatal(err)
			}
			env.ID, env.DispatchedAt = "01J0000000000000000000BENCH", time.Now().UnixMilli()
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				env.Headers = nil // a new job each time
				out := runtime.DispatchCall{Kind: runtime.DispatchKindOne, Jobs: []runtime.Outgoing{{Envelope: env}}}
				if err := tr.Dispatch(ctx, &out, next); err != nil {
					b.Fatal(err)
				}
				info := runtime.JobInfo{ID: env.ID, Name: env.Name, Queue: env.Queue, Attempt: 1, Worker: "w1", Headers: env.Headers}
				if err := mw.Handle(runtime.WithJobInfo(ctx, info), next); err != nil {
					b.Fatal(err)
				}
				tr.Observe(runtime.Event{Kind: runtime.JobProcessed, Worker: "w1", Queue: env.Queue, Name: env.Name, ID: env.ID, Attempt: 1})
			}
		})
	}
}

// BenchmarkSpans is the floor under BenchmarkJob: two bare spans, with
// the same attributes and a link, started and ended through the SDK.
func BenchmarkSpans(b *testing.B) {
	for _, p := range benchProviders {
		b.Run(p.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(p.sampler), sdktrace.WithBatcher(discard{}))
			defer tp.Shutdown(context.Background()) //nolint:errcheck // drops spans
			tracer := tp.Tracer(jobotel.ScopeName)
			ctx := context.Background()
			send := []attribute.KeyValue{
				attribute.String("messaging.system", "jobgen"), attribute.String("messaging.operation.type", "send"),
				attribute.String("messaging.operation.name", "send"), attribute.String("jobgen.dispatch.kind", "one"),
				attribute.String("messaging.destination.name", "bench"), attribute.String("messaging.message.id", "01J0000000000000000000BENCH"),
				attribute.String("jobgen.job.name", "test.Step"),
			}
			process := []attribute.KeyValue{
				attribute.String("messaging.system", "jobgen"), attribute.String("messaging.operation.type", "process"),
				attribute.String("messaging.operation.name", "process"), attribute.String("messaging.destination.name", "bench"),
				attribute.String("messaging.message.id", "01J0000000000000000000BENCH"), attribute.String("jobgen.job.name", "test.Step"),
				attribute.Int("jobgen.job.attempt", 1), attribute.String("jobgen.worker.name", "w1"),
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				_, s := tracer.Start(ctx, "send bench", trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(send...))
				sc := s.SpanContext()
				s.End()
				_, p := tracer.Start(ctx, "process bench", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(process...),
					trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: sc}))
				p.SetAttributes(attribute.String("jobgen.outcome", "ok"))
				p.End()
			}
		})
	}
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per op.
func reportCPU(b *testing.B) func() {
	start, err := cputime.Process()
	return func() {
		if end, _ := cputime.Process(); err == nil {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
