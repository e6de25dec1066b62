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
//     call: a single Dispatch, a PushBulk of many jobs or a batch alike
//     (plain "send", with no destination, for a PushBulk to several
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
//
// Attributes: messaging.system ("jobgen"), messaging.operation.type
// (send or process), messaging.operation.name, messaging.destination.name
// (the queue), messaging.message.id (the job ID; on a send span only for
// one job, with messaging.batch.message_count for many), and
// jobgen.job.name, jobgen.job.attempt and jobgen.worker.name. A process
// span ends when the worker settles the attempt, with jobgen.outcome:
//
//	ok         the handler succeeded (or deleted its job)
//	error      the handler returned an error or panicked; the job is retried
//	released   the handler or its middleware released the job
//	timed_out  the attempt ran past its timeout
//	failed     the job failed for good and is in the failed store
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
package jobotel
