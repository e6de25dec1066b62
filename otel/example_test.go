package jobotel_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	jobotel "github.com/jobgen/jobgen/otel"
	"github.com/jobgen/jobgen/runtime"
)

// A dispatcher and a worker traced with one Tracing: the dispatch's send
// span, and the process span of the job's attempt, which links to it.
func Example() {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := jobotel.New(jobotel.Config{TracerProvider: tp, Propagator: propagation.TraceContext{}})

	// embedded:// is an in-process Redis; a program imports
	// runtime/embedded for it (the tests have it through redistest).
	engine, err := runtime.Open(ctx, "embedded://example-otel", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	cfg := runtime.WorkerConfig{StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tr.Instrument(engine, &cfg) // dispatch middleware, worker middleware
	r := runtime.NewRouter()
	runtime.Register(r, "test.Step", func(ctx context.Context, s step) error { return nil })
	w, err := runtime.NewWorker(engine, r, cfg)
	if err != nil {
		panic(err)
	}
	tr.Attach(w) // ends each attempt's span with its outcome

	if _, err := runtime.Dispatch(runtime.WithDispatcher(ctx, engine), step{N: 1}); err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
	spans := exp.GetSpans()
	slices.SortFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	for _, s := range spans {
		fmt.Printf("%s (%s) links=%d outcome=%q\n", s.Name, s.SpanKind, len(s.Links), attr(s, "jobgen.outcome"))
	}
	// Output:
	// send default (producer) links=0 outcome=""
	// process default (consumer) links=1 outcome="ok"
}
