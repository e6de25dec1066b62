package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
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

	env, err := DecodeEnvelope(res.Queue, res.ID, res.Payload)
	if err != nil {
		w.fail(base, res, nil, err)
		return
	}
	if err := w.open(env); err != nil { // crypt.go: a sealed body that does not open fails at once
		w.fail(base, res, env, err)
		return
	}
	if res.Err != nil { // its state entry in Redis was malformed: its counts are lost
		w.fail(base, res, env, res.Err)
		return
	}
	// worker_bus.go: a chain link that finished before its worker died,
	// or a job of a cancelled batch, settles as a success without running,
	// before any check of its attempts.
	if w.prepare(base, res, env) {
		w.succeed(base, res, env, Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts})
		return
	}
	maxTries := env.Tries
	if maxTries == 0 {
		maxTries = w.cfg.Tries
	}
	// A job reserved again after its worker died mid-attempt may already
	// be past its limits.
	switch {
	case env.RetryUntil > 0 && w.cfg.Clock().UnixMilli() > env.RetryUntil:
		w.fail(base, res, env, fmt.Errorf("%w (%s)", ErrRetryUntil, time.UnixMilli(env.RetryUntil).Format(time.RFC3339)))
		return
	case env.RetryUntil == 0 && maxTries > 0 && res.Attempts > maxTries:
		w.fail(base, res, env, fmt.Errorf("%w: attempt %d of %d (an earlier attempt did not finish)", ErrMaxAttempts, res.Attempts, maxTries))
		return
	case w.r.lookup(env.Name) == nil:
		w.fail(base, res, env, fmt.Errorf("%w %q; registered: %v", ErrUnknownJob, env.Name, w.r.Names()))
		return
	}

	ev := Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts}
	w.emit(ev, JobProcessing)

	timeout := env.Timeout
	if timeout <= 0 {
		timeout = w.cfg.Timeout
	}
	began := time.Now()
	jobCtx, cancelJob := newJobContext(base, began, timeout, JobInfo{ID: res.ID, Name: env.Name, Queue: res.Queue, Attempt: res.Attempts, BatchID: env.BatchID}, w.e)
	defer cancelJob(nil)
	w.track(res.Ref, cancelJob)

	herr := w.attempt(jobCtx, env)
	ev.Duration = time.Since(began)
	w.untrack(res.Ref)

	cause := context.Cause(jobCtx)
	switch {
	case errors.Is(cause, ErrLeaseLost):
		w.log.Warn("job lease lost while running; its result is discarded", "queue", res.Queue, "job", env.Name, "id", res.ID, "err", herr)
		return
	case errors.Is(cause, ErrWorkerStopping):
		return // released by drain
	}

	var rel *releaseRequest
	var failReq *failRequest
	switch {
	case herr == nil || errors.Is(herr, deleteRequest{}):
		w.succeed(base, res, env, ev)
	case errors.As(herr, &rel):
		w.release(base, res, ev, rel.delay, false, nil)
	case errors.As(herr, &failReq):
		w.fail(base, res, env, failReq.err)
	case errors.Is(cause, ErrTimeout):
		ev.Err = fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, herr)
		w.emit(ev, JobTimedOut)
		if env.FailOnTimeout {
			w.fail(base, res, env, ev.Err)
			return
		}
		w.retryOrFail(base, res, env, ev, maxTries, false)
	case errors.Is(herr, ErrDecode):
		ev.Err = herr
		w.emit(ev, JobExceptionOccurred)
		w.fail(base, res, env, herr) // decoding will not get better
	default:
		ev.Err = herr
		w.emit(ev, JobExceptionOccurred)
		w.retryOrFail(base, res, env, ev, maxTries, true)
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
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- &PanicError{Value: r, Stack: debug.Stack()}
			}
		}()
		done <- w.runMiddleware(ctx, env) // middleware.go: the worker's middleware, then the router
	}()
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
		return context.Cause(ctx)
	}
}

// retryOrFail releases the job with backoff, or fails it when its tries,
// retry-until or max exceptions are used up.
func (w *Worker) retryOrFail(ctx context.Context, res Reservation, env *Envelope, ev Event, maxTries int, exception bool) {
	exceptions := res.Exceptions
	if exception {
		exceptions++
	}
	switch {
	case env.MaxExceptions > 0 && exceptions >= env.MaxExceptions:
		w.fail(ctx, res, env, fmt.Errorf("%w (%d): %w", ErrMaxExceptions, exceptions, ev.Err))
	case env.RetryUntil > 0:
		if w.cfg.Clock().UnixMilli() >= env.RetryUntil {
			w.fail(ctx, res, env, fmt.Errorf("%w: %w", ErrRetryUntil, ev.Err))
			return
		}
		w.release(ctx, res, ev, w.cfg.backoff(env, res.Attempts), exception, ev.Err)
	case maxTries > 0 && res.Attempts >= maxTries:
		w.fail(ctx, res, env, fmt.Errorf("%w (%d of %d): %w", ErrMaxAttempts, res.Attempts, maxTries, ev.Err))
	default:
		w.release(ctx, res, ev, w.cfg.backoff(env, res.Attempts), exception, ev.Err)
	}
}

// release puts the job back. JobReleased is emitted first, so that it
// comes before the JobProcessing of the next attempt, which may start on
// another goroutine as soon as the job is back. A release that fails is
// tried again (settleRetried); if it never gets through, the job comes
// back anyway when its lease runs out.
func (w *Worker) release(ctx context.Context, res Reservation, ev Event, delay time.Duration, exception bool, cause error) {
	ev.Delay, ev.Err = delay, cause
	w.emit(ev, JobReleased)
	attrs := []any{"queue", res.Queue, "job", ev.Name, "id", res.ID}
	err := w.settleRetried(ctx, "release", func() error {
		return w.e.Release(ctx, ReleaseOpts{Delay: delay, Exception: exception}, res.Ref)
	}, attrs...)
	if err != nil {
		w.settleError("release", err, attrs...)
	}
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

// fail moves the job to the failed store, runs its failed hook and emits
// JobFailed. env is nil for a payload that did not decode.
func (w *Worker) fail(ctx context.Context, res Reservation, env *Envelope, cause error) {
	name := ""
	if env != nil {
		name = env.Name
		w.failing(ctx, env, cause) // worker_bus.go: batch, chain catch
	}
	attrs := []any{"queue", res.Queue, "job", name, "id", res.ID}
	err := w.settleRetried(ctx, "moving to the failed store", func() error {
		return w.e.Fail(ctx, Failure{Ref: res.Ref, Name: name, Err: cause, Attempts: res.Attempts})
	}, attrs...)
	if err != nil {
		w.settleError("moving to the failed store", err, append(attrs, "cause", cause)...)
		return
	}
	w.log.Warn("job failed", "queue", res.Queue, "job", name, "id", res.ID, "attempt", res.Attempts, "err", cause)
	if env != nil {
		w.runFailedHook(ctx, env, cause)
		w.ended(ctx, env)
	}
	w.emit(Event{Worker: w.cfg.Name, Queue: res.Queue, Name: name, ID: res.ID, Attempt: res.Attempts, Err: cause}, JobFailed)
}

func (w *Worker) runFailedHook(ctx context.Context, env *Envelope, cause error) {
	defer func() {
		if r := recover(); r != nil {
			w.log.Error("failed hook panicked", "job", env.Name, "id", env.ID, "panic", r)
		}
	}()
	w.r.RunFailed(ctx, env, cause)
}

// succeed dispatches the next link of the job's chain, then hands the
// job to the acker.
func (w *Worker) succeed(ctx context.Context, res Reservation, env *Envelope, ev Event) {
	if err := w.completed(ctx, env); err != nil { // worker_bus.go: batch, chain
		// Not acked: the job runs again when its lease runs out, and its
		// batch and chain are seen to then.
		w.log.Error("counting a job in its batch or dispatching the next job of its chain failed", "queue", res.Queue, "job", env.Name, "id", res.ID, "err", err)
		return
	}
	w.queueAck(ctx, res.Ref)
	w.emit(ev, JobProcessed)
	w.ended(ctx, env)
}

func (w *Worker) emit(ev Event, kind EventKind) {
	ev.Kind = kind
	w.events.emit(ev)
}

// track lets the heartbeat keep ref's lease and cancel with cancel. A
// job is tracked from its reserve; when it starts, its entry takes the
// job's cancel and keeps the lease it has.
func (w *Worker) track(ref Ref, cancel context.CancelCauseFunc) {
	w.mu.Lock()
	if a := w.active[ref]; a != nil {
		a.cancel = cancel
	} else {
		w.active[ref] = &activeJob{cancel: cancel, leaseUntil: time.Now().Add(w.cfg.RetryAfter)}
	}
	w.mu.Unlock()
}

func (w *Worker) untrack(ref Ref) {
	w.mu.Lock()
	delete(w.active, ref)
	w.mu.Unlock()
}
