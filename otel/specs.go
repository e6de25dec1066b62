package jobotel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobgen/jobgen/runtime"
)

// maxSpecs bounds each cache of span specs: a program that makes up
// queue names as it goes builds the specs past it for each span.
const maxSpecs = 1024

// spanSpec is what the spans of one kind share, built once: the span's
// name and its start options, whose attributes are those that do not
// change from one job to the next. The options are read, never changed.
type spanSpec struct {
	name string
	opts []trace.SpanStartOption
}

// specs caches span specs by key. A lookup is an atomic load and a map
// read, with no lock and no allocation (a sync.Map would box each
// struct key); a miss copies the map, which happens once per key.
type specs[K comparable] struct {
	m  atomic.Pointer[map[K]*spanSpec]
	mu sync.Mutex // serializes misses
}

// get returns the spec of k, built by build if it is not cached.
func (c *specs[K]) get(k K, build func(K) *spanSpec) *spanSpec {
	if m := c.m.Load(); m != nil {
		if s, ok := (*m)[k]; ok {
			return s
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if s, ok := (*old)[k]; ok {
			return s
		}
		if len(*old) >= maxSpecs {
			return build(k)
		}
	}
	s := build(k)
	m := make(map[K]*spanSpec, 1+len(mapOrNil(old)))
	for k, v := range mapOrNil(old) {
		m[k] = v
	}
	m[k] = s
	c.m.Store(&m)
	return s
}

func mapOrNil[K comparable](m *map[K]*spanSpec) map[K]*spanSpec {
	if m == nil {
		return nil
	}
	return *m
}

// sendKey is what a send span of one job takes from its push.
type sendKey struct {
	queue, name string
	kind        runtime.DispatchKind
}

func newSendSpec(k sendKey) *spanSpec {
	return &spanSpec{name: "send " + k.queue, opts: []trace.SpanStartOption{producer, trace.WithAttributes(
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("send"),
		DispatchKey.String(k.kind.String()),
		semconv.MessagingDestinationName(k.queue),
		JobNameKey.String(k.name),
	)}}
}

// processKey is what a process span takes from its attempt, but for
// the job's ID and the attempt's number.
type processKey struct {
	queue, name, worker string
}

func newProcessSpec(k processKey) *spanSpec {
	return &spanSpec{name: "process " + k.queue, opts: []trace.SpanStartOption{consumer, trace.WithAttributes(
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingOperationName("process"),
		semconv.MessagingDestinationName(k.queue),
		JobNameKey.String(k.name),
		WorkerNameKey.String(k.worker),
	)}}
}

// The start options every span of a kind shares.
var (
	producer = trace.WithSpanKind(trace.SpanKindProducer)
	consumer = trace.WithSpanKind(trace.SpanKindConsumer)
	newRoot  = trace.WithNewRoot()
)

// outcomes are the OutcomeKey attributes, one slice each, so that
// ending a span does not build one.
var outcomes = func() map[string][]attribute.KeyValue {
	m := map[string][]attribute.KeyValue{}
	for _, o := range []string{OutcomeOK, OutcomeError, OutcomeReleased, OutcomeTimedOut, OutcomeFailed, OutcomeCancelled, "unknown"} {
		m[o] = []attribute.KeyValue{OutcomeKey.String(o)}
	}
	return m
}()

// outcomeAttr returns the OutcomeKey attribute of outcome, as a slice
// the caller must not change.
func outcomeAttr(outcome string) []attribute.KeyValue {
	if kv, ok := outcomes[outcome]; ok {
		return kv
	}
	return []attribute.KeyValue{OutcomeKey.String(outcome)}
}
