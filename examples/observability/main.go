// Command observability wires jobgen's OpenTelemetry tracing (package
// jobotel) and Prometheus metrics (package jobprom) into a dispatcher and
// a worker, runs an order through a chain of three jobs, the first of
// which fails once and is retried, then prints the spans, as a tree with
// their links, and a scrape of the metrics.
//
//	go run ./examples/observability
//	go run ./examples/observability -redis redis://127.0.0.1:6379/0
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	jobotel "github.com/jobgen/jobgen/otel"
	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	url := flag.String("redis", "embedded://", "Redis URL: redis://host:port/db, or embedded:// for an in-process server")
	flag.Parse()
	if err := run(context.Background(), *url, "observability", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "observability:", err)
		os.Exit(1)
	}
}

type handlers struct{ out io.Writer }

func (h handlers) HandleChargeOrder(ctx context.Context, j ChargeOrder) error {
	if info, _ := runtime.JobInfoFrom(ctx); info.Attempt == 1 {
		return errors.New("payment provider: try again")
	}
	return nil
}

func (h handlers) HandleSendReceipt(ctx context.Context, j SendReceipt) error { return nil }
func (h handlers) HandleShipOrder(ctx context.Context, j ShipOrder) error     { return nil }

func run(ctx context.Context, url, prefix string, out io.Writer) error {
	// Tracing: spans go to memory here; a real program exports them
	// (OTLP, say) and sets the global provider and propagator instead.
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx) //nolint:errcheck // in memory
	tracing := jobotel.New(jobotel.Config{
		TracerProvider: tp,
		Propagator:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	})
	metrics := jobprom.New(jobprom.Config{})

	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	if err != nil {
		return err
	}
	defer engine.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics, jobprom.NewQueueCollector(engine, []string{"orders"}))

	cfg := runtime.WorkerConfig{Queues: []string{"orders"}, StopWhenEmpty: true, Concurrency: 1, Name: "worker-1",
		Sleep: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tracing.Instrument(engine, &cfg)
	metrics.Instrument(engine, &cfg)
	r := runtime.NewRouter()
	Register(r, handlers{out: out})
	w, err := runtime.NewWorker(engine, r, cfg)
	if err != nil {
		return err
	}
	tracing.Attach(w)
	metrics.Attach(w)

	// The request that places the order dispatches its chain.
	reqCtx, req := tp.Tracer("shop").Start(runtime.WithDispatcher(ctx, engine), "POST /orders")
	_, err = runtime.Chain(ChargeOrder{OrderID: 7}, SendReceipt{OrderID: 7}, ShipOrder{OrderID: 7}).Dispatch(reqCtx)
	req.End()
	if err != nil {
		return err
	}
	if err := w.Run(ctx); err != nil {
		return err
	}

	fmt.Fprintln(out, "Spans (children indented; a link is -> the span it links to):")
	printSpans(out, spans.GetSpans())
	fmt.Fprintln(out, "\nScrape:")
	return printScrape(out, reg)
}

// printSpans prints spans as a tree by parent, each root trace after
// the other in the order they started, with links and outcome.
func printSpans(out io.Writer, spans tracetest.SpanStubs) {
	slices.SortFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	label := map[trace.SpanID]string{}
	for _, s := range spans {
		label[s.SpanContext.SpanID()] = describe(s)
	}
	var walk func(parent trace.SpanID, depth int)
	walk = func(parent trace.SpanID, depth int) {
		for _, s := range spans {
			if s.Parent.SpanID() != parent {
				continue
			}
			line := strings.Repeat("  ", depth) + "- " + label[s.SpanContext.SpanID()]
			for _, l := range s.Links {
				line += "  -> " + label[l.SpanContext.SpanID()]
			}
			if o := attr(s, "jobgen.outcome"); o != "" {
				line += "  [" + o + "]"
			}
			fmt.Fprintln(out, line)
			walk(s.SpanContext.SpanID(), depth+1)
		}
	}
	walk(trace.SpanID{}, 0)
}

func describe(s tracetest.SpanStub) string {
	d := s.Name
	if s.SpanKind == trace.SpanKindProducer || s.SpanKind == trace.SpanKindConsumer {
		d += fmt.Sprintf(" (%s %s", strings.ToLower(s.SpanKind.String()), attr(s, "jobgen.job.name"))
		if a := attr(s, "jobgen.job.attempt"); a != "" {
			d += " attempt " + a
		}
		d += ")"
	}
	return d
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// printScrape prints the registry as Prometheus scrapes it, without the
// histograms' buckets.
func printScrape(out io.Writer, reg *prometheus.Registry) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return err
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if strings.Contains(line, "_bucket{") || strings.HasPrefix(line, "# HELP") {
			continue
		}
		fmt.Fprintln(out, line)
	}
	return nil
}
