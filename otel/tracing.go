package jobotel

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobgen/jobgen/runtime"
)

// ScopeName is the instrumentation scope of the tracer.
const ScopeName = "github.com/jobgen/jobgen/otel"

// System is the value of messaging.system.
const System = "jobgen"

// The attributes of this package that the conventions do not define.
const (
	JobNameKey    = attribute.Key("jobgen.job.name")
	AttemptKey    = attribute.Key("jobgen.job.attempt")
	WorkerNameKey = attribute.Key("jobgen.worker.name")
	OutcomeKey    = attribute.Key("jobgen.outcome")
	DispatchKey   = attribute.Key("jobgen.dispatch.kind")
)

// The outcomes of an attempt, as OutcomeKey values: the worker's log
// tells the same outcomes with the same words.
const (
	OutcomeOK       = runtime.OutcomeOK
	OutcomeError    = runtime.OutcomeError
	OutcomeReleased = runtime.OutcomeReleased
	OutcomeTimedOut = runtime.OutcomeTimedOut
	OutcomeFailed   = runtime.OutcomeFailed
	// OutcomeCancelled ends the span of an attempt an operator cancelled
	// while it ran (runtime.JobCancelled).
	OutcomeCancelled = runtime.OutcomeCancelled
)

// Config configures Tracing. The zero value uses the global
// TracerProvider and propagator (otel.SetTracerProvider,
// otel.SetTextMapPropagator).
type Config struct {
	// TracerProvider makes the tracer; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator injects the trace context into envelope headers and
	// extracts it; nil means otel.GetTextMapPropagator().
	Propagator propagation.TextMapPropagator
	// ChildOf makes each attempt's span a child of its dispatch's span,
	// rather than the root of a trace of its own with a link to it.
	ChildOf bool
}

// Tracing makes the spans of dispatches and attempts. One Tracing serves
// any number of engines and workers; it is safe for concurrent use.
type Tracing struct {
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	fields  []string // prop.Fields(), if prop is fixed; nil to ask it
	childOf bool

	sends     specs[sendKey]    // send spans of one job
	processes specs[processKey] // process spans

	mu   sync.Mutex
	open map[string]*attemptSpan // by job ID: the attempt running in this process
	// prior holds, by job ID, the attempt whose place in open a later
	// attempt of the job took before the earlier one's settle event came.
	// A worker emits that event after its settle call returns, and by
	// then the job may be ready again and started by another slot (a
	// release with no delay). The earlier span ends at its own event, or,
	// as "unknown", when the later attempt settles or a third starts.
	prior map[string]*attemptSpan
}

// attemptSpan is the span of an attempt that has not been settled yet.
type attemptSpan struct {
	span    trace.Span
	bag     baggage.Baggage // from its dispatch, for the chain link it pushes
	attempt int
	outcome string

	// The parts of its span's start that change from one attempt to
	// the next, here so that they come in the one allocation the attempt
	// needs anyway.
	link  [1]trace.Link
	opts  [4]trace.SpanStartOption
	attrs [2]attribute.KeyValue
}

// New returns a Tracing with cfg.
func New(cfg Config) *Tracing {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	t := &Tracing{
		tracer:  tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:    prop,
		childOf: cfg.ChildOf,
		open:    map[string]*attemptSpan{},
		prior:   map[string]*attemptSpan{},
	}
	if cfg.Propagator != nil { // the global one may be replaced later
		t.fields = prop.Fields()
	}
	return t
}

// Instrument adds t's dispatch middleware to e and its worker middleware
// to cfg, outermost, so a worker built with cfg traces its jobs. Attach
// the worker once it is built.
func (t *Tracing) Instrument(e *runtime.Engine, cfg *runtime.WorkerConfig) {
	e.UseDispatch(t.Dispatch)
	cfg.Middleware = append([]runtime.Middleware{t.Middleware()}, cfg.Middleware...)
}

// Attach subscribes t to w's events, which end each attempt's span with
// its outcome.
func (t *Tracing) Attach(w *runtime.Worker) { w.Subscribe(t.Observe) }

// Dispatch is a runtime.DispatchMiddleware: one PRODUCER span for the
// call, whose context it injects into every envelope's headers.
func (t *Tracing) Dispatch(ctx context.Context, out *runtime.DispatchCall, next func(context.Context) error) error {
	if len(out.Jobs) == 0 {
		return next(ctx)
	}
	if out.From != nil {
		ctx = t.pusherContext(ctx, out.From)
	}
	var span trace.Span
	if first := out.Jobs[0].Envelope; len(out.Jobs) == 1 {
		spec := t.sends.get(sendKey{queue: first.Queue, name: first.Name, kind: out.Kind}, newSendSpec)
		ctx, span = t.tracer.Start(ctx, spec.name, spec.opts...)
		if span.IsRecording() {
			span.SetAttributes(semconv.MessagingMessageID(first.ID))
		}
	} else {
		ctx, span = t.startMany(ctx, out)
	}
	defer span.End()
	t.inject(ctx, out.Jobs)
	err := next(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// startMany starts the send span of a push of several jobs.
func (t *Tracing) startMany(ctx context.Context, out *runtime.DispatchCall) (context.Context, trace.Span) {
	first := out.Jobs[0].Envelope
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("send"),
		DispatchKey.String(out.Kind.String()),
		semconv.MessagingBatchMessageCount(len(out.Jobs)),
	}
	name := "send"
	if oneQueue(out.Jobs) { // a bulk push to several queues has no one destination
		name += " " + first.Queue
		attrs = append(attrs, semconv.MessagingDestinationName(first.Queue))
	}
	return t.tracer.Start(ctx, name, producer, trace.WithAttributes(attrs...))
}

// inject sets the context of ctx in the headers of jobs. Each envelope
// gets a map of its own, as middleware after this one may set headers
// of a job; the first without headers takes the map injected into.
func (t *Tracing) inject(ctx context.Context, jobs []runtime.Outgoing) {
	var carrier propagation.MapCarrier
	taken := false
	for _, j := range jobs {
		env := j.Envelope
		if len(env.Headers) > 0 && t.carries(env.Headers) {
			// Pushed before: its context stays that of its first push, so
			// that a push made again stores the same payload, as the
			// engine requires of a job ID that exists already.
			continue
		}
		if carrier == nil {
			carrier = make(propagation.MapCarrier, 2)
			t.prop.Inject(ctx, carrier)
			if len(carrier) == 0 {
				return // no context to carry
			}
		}
		if len(env.Headers) == 0 && !taken {
			env.Headers, taken = carrier, true
			continue
		}
		h := make(map[string]string, len(env.Headers)+len(carrier))
		for k, v := range env.Headers {
			h[k] = v
		}
		for k, v := range carrier {
			h[k] = v
		}
		env.Headers = h
	}
}

// carries says whether headers hold a context of t's propagator.
func (t *Tracing) carries(headers map[string]string) bool {
	fields := t.fields
	if fields == nil {
		fields = t.prop.Fields()
	}
	for _, f := range fields {
		if _, ok := headers[f]; ok {
			return true
		}
	}
	return false
}

func oneQueue(jobs []runtime.Outgoing) bool {
	for _, j := range jobs[1:] {
		if j.Envelope.Queue != jobs[0].Envelope.Queue {
			return false
		}
	}
	return true
}

// pusherContext returns ctx with the span of the attempt that pushes a
// chain link as its parent: the attempt's open span if it runs in this
// process, else the context its own dispatch carried.
func (t *Tracing) pusherContext(ctx context.Context, from *runtime.JobInfo) context.Context {
	t.mu.Lock()
	a := t.open[from.ID]
	t.mu.Unlock()
	if a != nil {
		return baggage.ContextWithBaggage(trace.ContextWithSpan(ctx, a.span), a.bag)
	}
	return t.prop.Extract(ctx, propagation.MapCarrier(from.Headers))
}

// Middleware returns the worker middleware that starts each attempt's
// CONSUMER span and runs the handler in its context. Attach the worker
// too, or the spans never end.
func (t *Tracing) Middleware() runtime.Middleware { return runtime.MiddlewareFunc(t.handle) }

func (t *Tracing) handle(ctx context.Context, next func(context.Context) error) error {
	info, ok := runtime.JobInfoFrom(ctx)
	if !ok {
		return next(ctx)
	}
	remote := ctx
	if len(info.Headers) > 0 {
		remote = t.prop.Extract(ctx, propagation.MapCarrier(info.Headers))
	}
	spec := t.processes.get(processKey{queue: info.Queue, name: info.Name, worker: info.Worker}, newProcessSpec)
	a := &attemptSpan{bag: baggage.FromContext(remote), attempt: info.Attempt}
	opts := append(a.opts[:0], spec.opts...)
	parent := ctx
	if t.childOf {
		parent = remote
	} else {
		if sc := trace.SpanContextFromContext(remote); sc.IsValid() {
			a.link[0] = trace.Link{SpanContext: sc}
			opts = append(opts, trace.WithLinks(a.link[:]...), newRoot)
		}
		if a.bag.Len() > 0 {
			parent = baggage.ContextWithBaggage(parent, a.bag)
		}
	}
	ctx, a.span = t.tracer.Start(parent, spec.name, opts...)
	if a.span.IsRecording() {
		a.attrs = [...]attribute.KeyValue{semconv.MessagingMessageID(info.ID), AttemptKey.Int(info.Attempt)}
		a.span.SetAttributes(a.attrs[:]...)
	}
	t.mu.Lock()
	if old := t.open[info.ID]; old != nil { // an attempt not settled yet, or whose settling this process never saw
		endUnknown(t.prior[info.ID])
		t.prior[info.ID] = old
	}
	t.open[info.ID] = a
	t.mu.Unlock()
	return next(ctx)
}

// endUnknown ends the span of an attempt whose settling this process
// never saw, if a is one.
func endUnknown(a *attemptSpan) {
	if a != nil {
		a.span.SetAttributes(outcomeAttr("unknown")...)
		a.span.End()
	}
}

// Observe is a worker event subscriber: it records what happened to an
// attempt on its span and ends the span once the attempt is settled.
func (t *Tracing) Observe(ev runtime.Event) {
	switch ev.Kind {
	case runtime.JobExceptionOccurred, runtime.JobTimedOut, runtime.JobProcessed, runtime.JobReleased, runtime.JobFailed, runtime.JobCancelled:
	default:
		return
	}
	settled := ev.Kind == runtime.JobProcessed || ev.Kind == runtime.JobReleased || ev.Kind == runtime.JobFailed || ev.Kind == runtime.JobCancelled
	var gone *attemptSpan // an earlier attempt whose event will not come now
	t.mu.Lock()
	a, spans := t.open[ev.ID], t.open
	if a == nil || a.attempt != ev.Attempt {
		a, spans = t.prior[ev.ID], t.prior
	} else if settled {
		gone = t.prior[ev.ID]
		delete(t.prior, ev.ID)
	}
	if a == nil || a.attempt != ev.Attempt {
		t.mu.Unlock()
		return
	}
	if settled {
		delete(spans, ev.ID)
	}
	t.mu.Unlock()
	endUnknown(gone)
	switch ev.Kind {
	case runtime.JobExceptionOccurred:
		a.outcome = OutcomeError
		recordError(a.span, ev.Err)
	case runtime.JobTimedOut:
		a.outcome = OutcomeTimedOut
		recordError(a.span, ev.Err)
	case runtime.JobProcessed:
		a.outcome = OutcomeOK
		if ev.ResultSize > 0 {
			a.span.SetAttributes(attribute.Int("jobgen.result.size", ev.ResultSize))
		}
	case runtime.JobReleased:
		if a.outcome == "" {
			a.outcome = OutcomeReleased
		}
		a.span.SetAttributes(attribute.String("jobgen.release.delay", ev.Delay.String()))
	case runtime.JobFailed:
		// The handler's error is recorded once, as it happened; a failure
		// without one (FailRequest, a release with no tries left) records
		// its own. The status tells why the job stopped.
		if a.outcome != OutcomeError && a.outcome != OutcomeTimedOut {
			recordError(a.span, ev.Err)
		} else if ev.Err != nil {
			a.span.SetStatus(codes.Error, ev.Err.Error())
		}
		a.outcome = OutcomeFailed
	case runtime.JobCancelled:
		// Not an error of the job's: the status stays unset, the event
		// says why it ended.
		a.outcome = OutcomeCancelled
		a.span.AddEvent("jobgen.cancelled")
	}
	if settled {
		a.span.SetAttributes(outcomeAttr(a.outcome)...)
		a.span.End()
	}
}

func recordError(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
