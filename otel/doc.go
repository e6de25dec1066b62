// Package jobotel traces jobgen jobs with OpenTelemetry, from Dispatch to
// every attempt of the job's handler, across Redis.
//
// # Wiring
//
//	tr := jobotel.New(jobotel.Config{})           // global TracerProvider and propagator
//	tr.Instrument(engine, &workerCfg)              // dispatch middleware, worker middleware
//	w, err := runtime.NewWorker(engine, router, workerCfg)
//	tr.Attach(w)                                   // ends each attempt's span by its outcome
//
// A process that only dispatches needs engine.UseDispatch(tr.Dispatch).
//
// # Spans
//
// The spans follow the OpenTelemetry semantic conventions for messaging,
// version 1.43.0 (go.opentelemetry.io/otel/semconv/v1.43.0):
//
//   - A dispatch makes one span "send <queue>", of kind PRODUCER, for the
//     call: a single Dispatch, a PushMany of many jobs or a batch alike
//     (plain "send", with no destination, for a PushMany to several
//     queues).
//     It injects its context, through the configured propagator (W3C
//     traceparent and tracestate, and baggage if the propagator has it),
//     into the headers of every envelope pushed, so the context is kept
//     through releases, retries and queue:retry from the failed store.
//   - Each attempt makes one span "process <queue>", of kind CONSUMER,
//     that links to the producer's span, and starts a trace of its own, as
//     the conventions advise for work that may run long after, or many
//     times for one, dispatch. Config.ChildOf makes it a child of the
//     producer's span instead, for one trace from dispatch to handler.
//     The handler's context carries it, and the extracted baggage.
//   - The next link of a chain is pushed by the worker that finished the
//     link before it: its "send" span is a child of that link's "process"
//     span, and the next link's "process" span links to it.
//   - So is a workflow's step, by the worker of the parent whose end
//     released it: one "send" span for the steps a parent released, a
//     child of that parent's "process" span. The first steps' "send" is
//     a child of the context the workflow was dispatched in, so with
//     ChildOf every span of a workflow's steps is in that one trace.
//
// Attributes: messaging.system ("jobgen"), messaging.operation.type
// (send or process), messaging.operation.name, messaging.destination.name
// (the queue), messaging.message.id (the job ID; on a send span only for
// one job, with messaging.batch.message_count for many), and
// jobgen.job.name, jobgen.job.attempt and jobgen.worker.name. The job
// ID and the attempt are set just after a span starts, and only on a
// span that records, so a sampler sees the others. A process span ends
// when the worker settles the attempt, with jobgen.outcome:
//
//	ok         the handler succeeded (or deleted its job)
//	error      the handler returned an error or panicked; the job is retried
//	released   the handler or its middleware released the job
//	timed_out  the attempt ran past its timeout
//	failed     the job failed for good and is in the failed store
//	cancelled  an operator cancelled the running job (Inspector.Cancel);
//	           the status stays unset, and an event jobgen.cancelled
//	           marks it
//
// A job that succeeded and stored a result (runtime.RecordResult) has
// its size in bytes in jobgen.result.size.
//
// error, timed_out and failed set the span's status to Error and record
// the error as an exception event (once: a failure after an error keeps
// the error's event and sets the status to why the job failed).
//
// Limits: a job that fails before any handler runs (a payload that does
// not decode, a job no handler is registered for) has no process span.
// An attempt whose lease is lost is not settled by this worker, so its
// span stays open until the same job next starts in this process, and
// then ends with jobgen.outcome "unknown".
//
// # Overhead
//
// Nearly all of what tracing costs is the SDK's: two spans per job,
// started, ended and handed to the span processor. This package builds
// each span's name and fixed attributes once per queue, job name and
// worker, and adds little to a span that does not record. BenchmarkJob
// and BenchmarkSpans here (no Redis; the process's CPU time, GC and the
// batch processor's goroutine included) put one job's tracing at 10-15
// us of CPU sampled (4.5 us at one trace in ten), over a floor of about
// 9 us (3 us) for the two bare SDK spans, on a loaded 2-core
// machine where jobgen spends 125-150 us of this process's CPU per job
// in the drain below.
//
// examples/observability measures it in place, against a real Redis:
// BenchmarkDrain (1000 jobs dispatched one by one to a running worker)
// and BenchmarkPickup (jobs one at a time to an idle worker; the p50 from
// dispatch to the handler's start). Each iteration runs every variant on
// a fresh worker, in a rotating order; drain figures are medians of
// per-round ratios to everything off, pickup the ratio of the p50s over
// all rounds. Tracing there is the SDK with
// AlwaysSample, the BatchSpanProcessor's defaults and an exporter that
// drops the spans (2.0 spans exported per job), and the W3C propagator.
// One run of 30 rounds on that machine:
//
//	tracing / off          drain wall  drain CPU  idle pickup p50
//	every span             1.16        1.27       1.17
//	ParentBased(ratio 0.1) 1.09        1.09       1.09
//	no-op TracerProvider   1.01        0.99       1.06
//
// Runs differ by a few hundredths (every span: drain 1.14-1.22, pickup
// 1.11-1.17 over four runs); two identical variants come out at 0.98 to
// 1.01. In place the SDK costs two to three times what it costs alone
// (its garbage, and a wake of the processor's goroutine per span, on
// cores the worker and Redis share, are the likely reasons), so with every span sampled the overhead
// stays above 10% here; sampling one trace in ten brings it to 1.06-1.14
// over four runs, about the target but not reliably under it.
package jobotel
