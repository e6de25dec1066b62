package jobotel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobgen/jobgen/internal/redistest"
	jobotel "github.com/jobgen/jobgen/otel"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// step is a hand-written job, as generated code would write it.
type step struct {
	N    int
	opts runtime.JobOptions
}

func (s step) JobName() string                { return "test.Step" }
func (s step) JobOptions() runtime.JobOptions { return s.opts }
func (s step) EncodeJob() ([]byte, error)     { return runtime.Encode(s) }

// bundle is what a tracing test needs: an engine on one backend, a
// router, and a Tracing that exports to memory.
type bundle struct {
	ctx    context.Context
	engine *runtime.Engine
	router *runtime.Router
	exp    *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	tr     *jobotel.Tracing

	mu  sync.Mutex
	ids map[int]string // step N -> job ID, as its handler saw it
}

func forEachBackend(t *testing.T, cfg jobotel.Config, fn func(t *testing.T, b *bundle)) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			cfg := cfg // each backend's run sets its own TracerProvider and Propagator
			ctx := context.Background()
			e, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			cfg.TracerProvider = tp
			cfg.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
			b := &bundle{ctx: runtime.WithDispatcher(ctx, e), engine: e, router: runtime.NewRouter(), exp: exp, tp: tp, tr: jobotel.New(cfg), ids: map[int]string{}}
			e.UseDispatch(b.tr.Dispatch)
			fn(t, b)
		})
	}
}

// handle registers fn as test.Step's handler; it records each step's ID.
func (b *bundle) handle(fn func(ctx context.Context, s step, info runtime.JobInfo) error) {
	runtime.Register(b.router, "test.Step", func(ctx context.Context, s step) error {
		info, _ := runtime.JobInfoFrom(ctx)
		b.mu.Lock()
		b.ids[s.N] = info.ID
		b.mu.Unlock()
		return fn(ctx, s, info)
	})
}

func (b *bundle) id(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ids[n]
}

// drain runs a traced worker until its queue is empty.
func (b *bundle) drain(t *testing.T) {
	t.Helper()
	cfg := runtime.WorkerConfig{StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Name: "w1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.Middleware = append(cfg.Middleware, b.tr.Middleware())
	w, err := runtime.NewWorker(b.engine, b.router, cfg)
	require.NoError(t, err)
	b.tr.Attach(w)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, w.Run(ctx))
	require.NoError(t, ctx.Err(), "worker did not stop by itself")
}

// send returns the one send span that pushed job id.
func (b *bundle) send(t *testing.T, id string) tracetest.SpanStub {
	t.Helper()
	got := b.spans(func(s tracetest.SpanStub) bool {
		return s.SpanKind == trace.SpanKindProducer && attr(s, "messaging.message.id") == id
	})
	require.Len(t, got, 1, "send spans of %s", id)
	return got[0]
}

// process returns the process spans of job id, in the order they ended.
func (b *bundle) process(id string) []tracetest.SpanStub {
	return b.spans(func(s tracetest.SpanStub) bool {
		return s.SpanKind == trace.SpanKindConsumer && attr(s, "messaging.message.id") == id
	})
}

func (b *bundle) spans(keep func(tracetest.SpanStub) bool) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range b.exp.GetSpans() {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

func attr(s tracetest.SpanStub, k string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == k {
			return kv.Value.Emit()
		}
	}
	return ""
}

func attrs(s tracetest.SpanStub, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = attr(s, k)
	}
	return out
}

// linkedTo says that s is the root of a trace of its own with one link,
// to the span to.
func linkedTo(t *testing.T, s, to tracetest.SpanStub) {
	t.Helper()
	require.False(t, s.Parent.IsValid(), "%s has a parent", s.Name)
	require.Len(t, s.Links, 1)
	require.Equal(t, to.SpanContext.TraceID(), s.Links[0].SpanContext.TraceID())
	require.Equal(t, to.SpanContext.SpanID(), s.Links[0].SpanContext.SpanID())
}

// childOf says that s's parent is the span p.
func childOf(t *testing.T, s, p tracetest.SpanStub) {
	t.Helper()
	require.Equal(t, p.SpanContext.TraceID(), s.SpanContext.TraceID(), "%s is not in its parent's trace", s.Name)
	require.Equal(t, p.SpanContext.SpanID(), s.Parent.SpanID(), "%s is not a child of %s", s.Name, p.Name)
}

var errBoom = errors.New("boom")

type tracetestSpan = tracetest.SpanStub
