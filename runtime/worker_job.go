package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/internal/attempt"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// process runs one reserved job and settles it: ack, release or fail.
func (w *Worker) process(base context.Context, res Reservation) {
	defer w.wg.Done()
	defer func() {
		w.untrack(res.Ref) // a job settled before it ran was tracked from its reserve
		w.processed.Add(1)
		if w.cfg.Rest > 0 {
			w.sleep(w.cfg.Rest)
		}
		w.slots <- struct{}{}
	}()
	env, maxTries := w.admit(base, res)
	if env == nil {
		return // settled without running
	}
	ev := Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts}
	w.emit(ev, JobProcessing)

	timeout := env.Timeout
	if timeout <= 0 {
		timeout = w.cfg.Timeout
	}
	began := time.Now()
	jobCtx, cancelJob := newJobContext(base, began, timeout, JobInfo{ID: res.ID, Name: env.Name, Queue: res.Queue, Attempt: res.Attempts, BatchID: env.BatchID,
		Worker: w.cfg.Name, DispatchedAt: time.UnixMilli(env.DispatchedAt), Headers: env.Headers}, w.e)
	defer cancelJob(nil)
	jobCtx.ref = res.Ref
	if env.Step != nil { // workflow_step.go: its inputs, and Spawn
		jobCtx.step = newStepRun(w.e, env, res.Attempts)
	}
	w.track(res.Ref, cancelJob, RunningJob{Queue: res.Queue, ID: res.ID, Name: env.Name, Attempt: res.Attempts, StartedAt: began})

	herr := w.attempt(jobCtx, env)
	ev.Duration = time.Since(began)
	w.untrack(res.Ref)

	o := outcome{res: res, env: env, ev: ev, herr: herr, cause: context.Cause(jobCtx), timeout: timeout, maxTries: maxTries, progressed: jobCtx.endProgress(),
		result: jobCtx.result.data, began: began, completing: jobCtx.completing.Load()}
	if !w.settleCutShort(base, o) {
		w.settle(base, o)
	}
}

// admit decodes and checks a reserved job before it runs. It returns nil
// once it has settled the job without running it: a payload that does
// not decode or open, a malformed state entry, a chain link or batch job
// that needs no run (worker_steps.go), a job past its tries or retry-until,
// or one no handler is registered for. Otherwise it returns the job's
// envelope and the tries it has.
func (w *Worker) admit(base context.Context, res Reservation) (*Envelope, int) {
	env, err := DecodeEnvelope(res.Queue, res.ID, res.Payload)
	if err != nil {
		w.fail(base, res, nil, err)
		return nil, 0
	}
	if env.Group() != "" { // its settles pass the group keys (group.go)
		w.e.grouped.add(res.Queue)
	}
	if err := w.open(env); err != nil { // crypt.go: a sealed body that does not open fails at once
		w.fail(base, res, env, err)
		return nil, 0
	}
	if res.Err != nil { // its state entry in Redis was malformed: its counts are lost
		w.fail(base, res, env, res.Err)
		return nil, 0
	}
	// A chain link that finished before its worker died, or a job of a
	// cancelled batch, settles as a success without running, before any
	// check of its attempts.
	if w.prepare(base, res, env) {
		w.succeed(base, res, env, Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts}, false, nil)
		return nil, 0
	}
	// A job an earlier attempt completed in its handler's transaction
	// (CompleteTx), whose ack did not reach Redis, is acked without
	// running, before any check of its attempts (complete_tx.go).
	switch done, err := w.completedInTx(base, res); {
	case err != nil:
		w.log.Warn("could not tell whether an earlier attempt completed the job; it waits, its attempt returned", "queue", res.Queue, "job", env.Name, "id", res.ID, "err", err)
		ev := Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts}
		w.releaseWith(base, res, ev, ReleaseOpts{Delay: completionRecheck, Deferral: true}, err)
		return nil, 0
	case done:
		w.log.Info("job completed in its transaction by an earlier attempt; acked without running it again", "queue", res.Queue, "job", env.Name, "id", res.ID, "attempt", res.Attempts)
		w.succeed(base, res, env, Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts}, false, nil)
		return nil, 0
	}
	// A job of a newer schema version than this worker knows waits for a
	// newer worker, its attempt unused (schema_version.go).
	if rt := w.r.lookup(env.Name); rt != nil && rt.newerThanKnown(env) {
		w.giveBackNewer(base, res, env, rt.schemaVersion())
		return nil, 0
	}
	maxTries := env.Tries
	if maxTries == 0 {
		maxTries = w.cfg.Tries
	}
	// A job reserved again after its worker died mid-attempt may already
	// be past its limits.
	reason := limitsOf(env, maxTries).Admit(res.Attempts, w.cfg.Clock())
	if reason == nil && w.r.lookup(env.Name) == nil {
		reason = fmt.Errorf("%w %q; registered: %v", ErrUnknownJob, env.Name, w.r.Names())
	}
	if reason != nil {
		w.fail(base, res, env, reason)
		return nil, 0
	}
	return env, maxTries
}

// outcome is how one attempt ended.
type outcome struct {
	res      Reservation
	env      *Envelope
	ev       Event
	herr     error         // what the handler returned
	cause    error         // why its context ended, if it did
	timeout  time.Duration // the attempt's timeout
	maxTries int
	// progressed: the handler reported progress (Progress), whose entry
	// its ack deletes.
	progressed bool
	result     []byte    // what the handler recorded (RecordResult)
	began      time.Time // when the handler started
	// completing: the handler called CompleteTx, whose transaction may
	// have committed.
	completing bool
}

// settleCutShort settles an attempt that lost its lease or that a stop
// cut short, and says whether it did.
func (w *Worker) settleCutShort(base context.Context, o outcome) bool {
	switch {
	case errors.Is(o.cause, ErrCancelled):
		// The cancel settled the job: it is in the failed store, and a
		// sweep runs what follows (cancel.go). JobCancelled is logged.
		ev := o.ev
		ev.Err = o.cause
		w.emit(ev, JobCancelled)
	case errors.Is(o.cause, ErrLeaseLost):
		w.log.Warn("job lease lost while running; its result is discarded", "queue", o.res.Queue, "job", o.env.Name, "id", o.res.ID, "err", o.herr)
	case errors.Is(o.cause, ErrWorkerStopping) && errors.As(o.herr, new(*abandonedError)):
		// A handler that ignored the stop still runs: its job goes back
		// keeping the attempt, so that one that always hangs runs out of
		// tries rather than coming back at every stop.
		w.release(base, o.res, o.ev, 0, false, o.herr)
	case errors.Is(o.cause, ErrWorkerStopping) && o.herr != nil && !isControl(o.herr) && o.completing:
		// Cut short after CompleteTx, whose transaction may have
		// committed: the job goes back keeping its attempt, so that the
		// next worker looks it up before running it (complete_tx.go).
		w.release(base, o.res, o.ev, 0, false, o.herr)
	case errors.Is(o.cause, ErrWorkerStopping) && o.herr != nil && !isControl(o.herr):
		// The stop's grace ran out and cut the handler short: the job goes
		// back with its attempt returned, as a job that never started does.
		w.giveBack(base, o.res, o.ev)
	default:
		return false
	}
	return true
}

// settle acks, releases or fails a job by what its attempt returned.
func (w *Worker) settle(base context.Context, o outcome) {
	res, env, ev, herr := o.res, o.env, o.ev, o.herr
	var rel *releaseRequest
	var failReq *failRequest
	switch {
	case herr == nil || errors.Is(herr, deleteRequest{}):
		ev.ResultSize = len(o.result)
		w.succeed(base, res, env, ev, o.progressed, w.finishOf(o))
	case errors.As(herr, &rel) && rel.deferral:
		// The attempt is given back, so only a retry-until can have run out.
		if reason := limitsOf(env, 0).AfterRelease(res.Attempts-1, w.cfg.Clock()); reason != nil {
			w.fail(base, res, env, reason)
			return
		}
		delay := rel.delay
		if rel.hold > 0 { // HoldQueue: the queue is held before the job goes back
			delay = w.holdFor(base, res, rel.hold, rel.cause)
		}
		w.releaseWith(base, res, ev, ReleaseOpts{Delay: delay, Deferral: true}, nil)
	case errors.As(herr, &rel):
		if reason := limitsOf(env, o.maxTries).AfterRelease(res.Attempts, w.cfg.Clock()); reason != nil {
			w.fail(base, res, env, reason)
			return
		}
		w.release(base, res, ev, rel.delay, false, nil)
	case errors.As(herr, &failReq):
		w.fail(base, res, env, failReq.err)
	case errors.Is(herr, ErrAlreadyCompleted):
		// CompleteTx found the job completed by another attempt, in a
		// transaction that committed: it is done (complete_tx.go).
		w.log.Info("job completed in its transaction by another attempt; acked", "queue", res.Queue, "job", env.Name, "id", res.ID, "attempt", res.Attempts)
		ev.ResultSize = len(o.result)
		w.succeed(base, res, env, ev, o.progressed, w.finishOf(o))
	case errors.Is(o.cause, ErrTimeout):
		ev.Err = fmt.Errorf("%w after %v: %w", ErrTimeout, o.timeout, herr)
		w.emit(ev, JobTimedOut)
		if reason := limitsOf(env, o.maxTries).AfterTimeout(res.Attempts, w.cfg.Clock(), ev.Err); reason != nil {
			w.fail(base, res, env, reason)
			return
		}
		w.release(base, res, ev, w.cfg.backoff(env, res.Attempts), false, ev.Err)
	case errors.Is(herr, ErrDecode):
		if fe, newer := unknownKeyOf(herr, env, w.cfg.Clock()); newer {
			w.giveBackUnknownKey(base, res, env, ev, fe) // unknown_keys.go
			return
		}
		ev.Err = herr
		w.emit(ev, JobExceptionOccurred)
		w.fail(base, res, env, herr) // decoding will not get better
	default:
		ev.Err = herr
		w.emit(ev, JobExceptionOccurred)
		w.retryOrFail(base, res, env, ev, o.maxTries, true)
	}
}

// abandonAfter is how long a handler may keep running after its context
// is done before the worker stops waiting for it.
const abandonAfter = 2 * time.Second

// attempt runs the handler. A panic becomes a *PanicError. A handler
// that ignores its context for abandonAfter past its end is abandoned:
// its goroutine is left to finish, its result is ignored, and the attempt
// ends with the context's cause.
func (w *Worker) attempt(ctx context.Context, env *Envelope) error {
	done := make(chan error, 1)
	w.runners.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				done <- &PanicError{Value: r, Stack: stack()}
			}
		}()
		done <- w.runMiddleware(ctx, env) // worker_middleware.go: the worker's middleware, then the router
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(abandonAfter)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		w.log.Error("handler ignored its context; abandoned", "job", env.Name, "id", env.ID, "cause", context.Cause(ctx))
		return &abandonedError{cause: context.Cause(ctx)}
	}
}

// abandonedError ends an attempt whose handler ignored its context for
// abandonAfter past its end, and still runs.
type abandonedError struct{ cause error }

func (e *abandonedError) Error() string {
	return fmt.Sprintf("handler abandoned %v after its context ended: %v", abandonAfter, e.cause)
}

func (e *abandonedError) Unwrap() error { return e.cause }

// retryOrFail releases the job with backoff, or fails it when its tries,
// retry-until or max exceptions are used up (internal/attempt).
func (w *Worker) retryOrFail(ctx context.Context, res Reservation, env *Envelope, ev Event, maxTries int, exception bool) {
	exceptions := func() (int, error) { return res.Exceptions + 1, nil }
	reason, _ := limitsOf(env, maxTries).AfterException(res.Attempts, w.cfg.Clock(), ev.Err, exception, exceptions)
	if reason != nil {
		w.fail(ctx, res, env, reason)
		return
	}
	w.release(ctx, res, ev, w.cfg.backoff(env, res.Attempts), exception, ev.Err)
}

// limitsOf is what bounds env's attempts, with maxTries for its tries.
func limitsOf(env *Envelope, maxTries int) attempt.Limits {
	l := attempt.Limits{Tries: maxTries, MaxExceptions: env.MaxExceptions, FailOnTimeout: env.FailOnTimeout}
	if env.RetryUntil > 0 {
		l.RetryUntil = time.UnixMilli(env.RetryUntil)
	}
	return l
}

// release puts the job back, and emits JobReleased once the release is
// accepted: a worker whose lease was lost reports nothing. A release
// that fails is tried again (settleRetried); if it never gets through,
// the job comes back anyway when its lease runs out.
func (w *Worker) release(ctx context.Context, res Reservation, ev Event, delay time.Duration, exception bool, cause error) {
	w.releaseWith(ctx, res, ev, ReleaseOpts{Delay: delay, Exception: exception}, cause)
}

// releaseWith is release with the options of the release spelled out.
func (w *Worker) releaseWith(ctx context.Context, res Reservation, ev Event, opts ReleaseOpts, cause error) {
	ev.Delay, ev.Err = opts.Delay, cause
	attrs := []any{"queue", res.Queue, "job", ev.Name, "id", res.ID}
	err := w.settleRetried(ctx, "release", func() error {
		return w.e.release(ctx, opts, cause, res.Ref)
	}, attrs...)
	if err != nil {
		w.settleError("release", err, attrs...)
		return
	}
	w.emit(ev, JobReleased)
}

// giveBack puts back a job whose handler a stop cut short, at the front
// of its queue and with the attempt it used returned, and emits
// JobReleased with ErrWorkerStopping once that is accepted. It counts in
// WorkerStats.Returned.
func (w *Worker) giveBack(ctx context.Context, res Reservation, ev Event) {
	attrs := []any{"queue", res.Queue, "job", ev.Name, "id", res.ID}
	err := w.settleRetried(ctx, "giving back a job cut short by the stop", func() error {
		return w.e.unreserve(ctx, res.Ref)
	}, attrs...)
	w.gaveBack([]Ref{res.Ref}, err)
	if err != nil {
		w.settleError("giving back a job cut short by the stop", err, attrs...)
		return
	}
	w.log.Info("job cut short by the stop; back on its queue with its attempt returned", attrs...)
	ev.Err = ErrWorkerStopping
	w.emit(ev, JobReleased)
}

// settleError logs a release or fail that did not happen. A lost lease
// is expected (the job is another worker's now) and is a warning; any
// other error means the job returns when its lease runs out.
func (w *Worker) settleError(what string, err error, attrs ...any) {
	attrs = append(attrs, "err", err)
	if errors.Is(err, ErrLeaseLost) {
		w.log.Warn(what+" refused: the job's lease was lost; another worker holds it", attrs...)
		return
	}
	w.log.Error(what+" failed; the job returns when its lease runs out", attrs...)
}

// fail moves the job to the failed store and, once the failed store has
// taken it, runs what follows a failure (failed) and emits JobFailed. A
// fail refused because the job's lease was lost runs none of it: the job
// is another worker's. env is nil for a payload that did not decode.
//
// What follows a failure is recorded as due beforehand, under the job's
// reservation token (hooks.go), so that if this worker dies between the
// fail and the end of its hooks another worker runs them.
func (w *Worker) fail(ctx context.Context, res Reservation, env *Envelope, cause error) {
	name := ""
	if env != nil {
		name = env.Name
	}
	attrs := []any{"queue", res.Queue, "job", name, "id", res.ID}
	due := env != nil && w.hasFailHooks(env)
	if due {
		defer w.runningHooks(res.Ref)() // hooks.go: the heartbeat renews the record
		if err := w.e.hooksDue(ctx, res.Ref); err != nil {
			w.log.Warn("recording a failing job's hooks as due failed; they still run after the fail", append(attrs, "err", err)...)
		}
	}
	err := w.settleRetried(ctx, "moving to the failed store", func() error {
		return w.e.broker().Fail(ctx, Failure{Ref: res.Ref, Name: name, Err: cause, Attempts: res.Attempts})
	}, attrs...)
	if err != nil {
		w.settleError("moving to the failed store", err, append(attrs, "cause", cause)...)
		if due && errors.Is(err, ErrLeaseLost) {
			w.hooksDone(ctx, res.Ref)
		}
		return
	}
	if env != nil {
		w.wakeAwait(ctx, res, env) // results.go: an Await of the job returns its failure now
		w.failed(ctx, env, cause)
	}
	if due {
		w.hooksDone(ctx, res.Ref)
		w.e.moveFailedLogged(ctx, res.Queue) // failed_backend.go: with EngineConfig.FailedStore
	}
	w.emit(Event{Worker: w.cfg.Name, Queue: res.Queue, Name: name, ID: res.ID, Attempt: res.Attempts, Err: cause}, JobFailed)
}

// failed runs what follows a job's failure for good, once the failed
// store has it: the job's batch counts it and runs the callbacks that
// fall due, its chain's catch runs, then its failed hook, and its unique
// lock is released.
func (w *Worker) failed(ctx context.Context, env *Envelope, cause error) {
	w.failing(ctx, env, cause) // worker_steps.go: batch, chain catch
	w.runFailedHook(ctx, env, cause)
	w.ended(ctx, env)
}

// hasFailHooks says whether anything follows env's failure: work of a
// jobStep (a batch, a chain's catch, a unique lock), or a failed hook.
func (w *Worker) hasFailHooks(env *Envelope) bool {
	for _, s := range w.steps {
		if s.hasFailWork(env) {
			return true
		}
	}
	rt := w.r.lookup(env.Name)
	return rt != nil && rt.failed != nil
}

func (w *Worker) runFailedHook(ctx context.Context, env *Envelope, cause error) {
	defer func() {
		if r := recover(); r != nil {
			w.log.Error("failed hook panicked", "job", env.Name, "id", env.ID, "panic", r)
		}
	}()
	w.r.RunFailed(ctx, env, cause)
}

// succeed counts the job in its batch and dispatches the next link of
// its chain, then hands the job to the acker, which emits JobProcessed
// once the ack is accepted. A job of a batch or a chain first checks,
// and renews, its lease: a worker that lost it (it was stopped past its
// lease, and another worker holds the job now) tells neither.
func (w *Worker) succeed(ctx context.Context, res Reservation, env *Envelope, ev Event, progressed bool, fin *Finish) {
	if env.BatchID != "" || len(env.Chain) > 0 {
		lost, err := w.e.broker().Extend(ctx, w.cfg.RetryAfter, res.Ref)
		if err == nil && len(lost) > 0 {
			w.log.Warn("job lease lost before its batch or chain was told; its result is discarded", "queue", res.Queue, "job", env.Name, "id", res.ID)
			return
		}
	}
	if end := w.stepOnAck(res, env, fin, progressed); end != nil { // workflow_ack.go
		if fin == nil {
			fin = &Finish{Ref: res.Ref}
		}
		fin.step = end
	}
	if err := w.completed(ctx, res, env, fin); err != nil { // worker_steps.go: batch, chain
		// Not acked: the job runs again when its lease runs out, and its
		// batch and chain are seen to then.
		w.log.Error("counting a job in its batch or dispatching the next job of its chain failed", "queue", res.Queue, "job", env.Name, "id", res.ID, "err", err)
		return
	}
	var step *jobrdb.StepEnd
	if fin != nil && fin.step != nil {
		step, fin = fin.step, nil // the ack records the step's end, and its result
	}
	if fin != nil && len(fin.Result) == 0 && fin.Record == nil {
		// A step's result went into its workflow: nothing is left behind,
		// and the plain ack serves.
		fin = nil
	}
	if step != nil {
		w.stepAcks.Add(1) // until its ack, and what its end calls for, are done
	}
	w.queueAck(ctx, ackItem{ref: res.Ref, env: env, ev: ev, progressed: progressed, fin: fin, step: step})
}

func (w *Worker) emit(ev Event, kind EventKind) {
	ev.Kind = kind
	if w.cfg.MonitorEvery >= 0 {
		w.mon.observe(ev)
	}
	w.events.emit(ev)
}

// track lets the heartbeat keep ref's lease and cancel with cancel. A
// job is tracked from its reserve; when it starts, its entry takes the
// job's cancel and what it runs as (run), and keeps the lease it has.
func (w *Worker) track(ref Ref, cancel context.CancelCauseFunc, run RunningJob) {
	w.mu.Lock()
	if a := w.active[ref]; a != nil {
		a.cancel, a.run = cancel, run
	} else {
		w.active[ref] = &activeJob{cancel: cancel, leaseUntil: time.Now().Add(w.cfg.RetryAfter), run: run}
	}
	w.mu.Unlock()
}

func (w *Worker) untrack(ref Ref) {
	w.mu.Lock()
	delete(w.active, ref)
	w.mu.Unlock()
}

// open decrypts env's body in place if it is sealed. It refuses a
// plaintext body for a job type registered as encrypted, so that nobody
// with write access to Redis can slip one in.
func (w *Worker) open(env *Envelope) error {
	if !env.Encrypted {
		if rt := w.r.lookup(env.Name); rt != nil && rt.encrypted {
			return fmt.Errorf("%w: job %s (%s) is an encrypted job type but its payload is not sealed", ErrDecrypt, env.ID, env.Name)
		}
		return nil
	}
	ring := w.e.cfg.Keys
	if ring == nil {
		return fmt.Errorf("%w: job %s (%s) is sealed but this worker's engine has no key ring (EngineConfig.Keys)", ErrDecrypt, env.ID, env.Name)
	}
	plain, err := ring.Open(env.Body, jobAD(env))
	if err != nil {
		return fmt.Errorf("job %s (%s): %w", env.ID, env.Name, err)
	}
	env.Body, env.Encrypted = plain, false
	return nil
}
