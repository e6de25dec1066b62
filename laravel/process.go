package laravel

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// errLeaseLost cancels a job whose reservation another worker took.
var errLeaseLost = errors.New("laravel: reservation lost (retry_after ran out)")

// abandonAfter is how long a handler may ignore its cancelled context.
const abandonAfter = 2 * time.Second

// process runs one popped job and settles it.
func (w *Worker) process(ctx context.Context, r *Reserved) {
	// Settling uses a context that outlives a stop, so a finished job
	// is deleted even while the worker stops.
	settle := context.WithoutCancel(ctx)
	if r.DecodeErr != nil {
		w.fail(settle, r, nil, fmt.Errorf("%w: %w", runtime.ErrDecode, r.DecodeErr))
		return
	}
	p := r.Payload
	mp, err := w.m.forPayload(p)
	if err != nil {
		w.fail(settle, r, nil, err)
		return
	}
	maxTries := int64(w.cfg.Tries)
	if p.MaxTries != nil {
		maxTries = *p.MaxTries
	}
	now := time.Now().Unix()
	// markJobAsFailedIfAlreadyExceedsMaxAttempts: an earlier attempt
	// did not finish (its worker died or timed out).
	switch {
	case p.RetryUntil != nil && now > *p.RetryUntil:
		w.fail(settle, r, mp, fmt.Errorf("%w: %s has been attempted too many times or run too long (retryUntil passed)", runtime.ErrRetryUntil, p.DisplayName))
		return
	case p.RetryUntil == nil && maxTries > 0 && p.Attempts > maxTries:
		w.fail(settle, r, mp, fmt.Errorf("%w: %s has been attempted too many times (%d of %d) or run too long", runtime.ErrMaxAttempts, p.DisplayName, p.Attempts, maxTries))
		return
	}
	body, err := mp.body(p)
	if err != nil {
		w.fail(settle, r, mp, fmt.Errorf("%w: %w", runtime.ErrDecode, err))
		return
	}
	var ch *chain
	if cmd, ok := p.Command(); ok {
		if ch, err = w.m.chainOf(cmd.Command); err != nil {
			w.fail(settle, r, mp, fmt.Errorf("%w: %w", runtime.ErrDecode, err))
			return
		}
	}
	timeout := w.cfg.Timeout
	if p.Timeout != nil && *p.Timeout > 0 {
		timeout = time.Duration(*p.Timeout) * time.Second
	}
	env := &runtime.Envelope{ID: p.UUID, Name: mp.name, Queue: r.Queue, Body: body}
	info := runtime.JobInfo{ID: p.UUID, Name: mp.name, Queue: r.Queue, Attempt: int(p.Attempts)}

	jobCtx, cancel := context.WithCancelCause(runtime.WithJobInfo(ctx, info))
	defer cancel(nil)
	jobCtx, cancelTimeout := context.WithTimeoutCause(jobCtx, timeout, runtime.ErrTimeout)
	defer cancelTimeout()
	heartbeatDone := w.heartbeat(jobCtx, r, cancel)
	w.emit(runtime.JobProcessing, r, mp.name, nil)
	began := time.Now()
	herr := w.attempt(jobCtx, env)
	took := time.Since(began)
	cause := context.Cause(jobCtx)
	cancel(nil)
	<-heartbeatDone

	if errors.Is(cause, errLeaseLost) {
		w.log.Warn("job's reservation was lost while it ran; its result is dropped", "queue", r.Queue, "job", p.DisplayName, "uuid", p.UUID)
		return
	}
	if ctx.Err() != nil && herr != nil {
		// Stopped mid-job: leave the reservation to retry_after, as a
		// Laravel worker that is killed does.
		return
	}
	if delay, ok := runtime.AsRelease(herr); ok {
		if w.settle(r, w.q.Release(settle, r, delay)) {
			w.emit(runtime.JobReleased, r, mp.name, func(e *runtime.Event) { e.Delay, e.Duration = delay, took })
		}
		return
	}
	if reason, ok := runtime.AsFail(herr); ok {
		w.fail(settle, r, mp, reason)
		return
	}
	if herr == nil || runtime.IsDelete(herr) {
		// As Laravel's CallQueuedHandler: the chain's next job is
		// pushed, then this one deleted (a job that deleted itself
		// continues its chain too).
		if ch != nil {
			if err := ch.dispatchNext(settle, w.q); err != nil {
				w.log.Error("dispatch the next job of the chain; the job stays reserved until retry_after", "queue", r.Queue, "job", p.DisplayName, "err", err)
				return
			}
		}
		if w.settle(r, w.q.Delete(settle, r)) {
			w.emit(runtime.JobProcessed, r, mp.name, func(e *runtime.Event) { e.Duration = took })
		}
		return
	}
	if errors.Is(herr, runtime.ErrDecode) {
		w.fail(settle, r, mp, herr)
		return
	}
	if errors.Is(cause, runtime.ErrTimeout) {
		err := fmt.Errorf("%w: %s has timed out after %v: %w", runtime.ErrTimeout, p.DisplayName, timeout, herr)
		w.emit(runtime.JobTimedOut, r, mp.name, func(e *runtime.Event) { e.Err, e.Duration = err, took })
		if p.FailOnTimeout {
			w.fail(settle, r, mp, err)
			return
		}
		w.exception(settle, r, mp, maxTries, err, false)
		return
	}
	w.emit(runtime.JobExceptionOccurred, r, mp.name, func(e *runtime.Event) { e.Err, e.Duration = herr, took })
	w.exception(settle, r, mp, maxTries, herr, true)
}

// heartbeat extends the reservation every third of retry_after until
// ctx ends; a lost reservation cancels the job.
func (w *Worker) heartbeat(ctx context.Context, r *Reserved, cancel context.CancelCauseFunc) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := w.q.cfg.RetryAfter / 3
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := w.q.Extend(ctx, r, w.q.cfg.RetryAfter)
			if errors.Is(err, ErrNotReserved) {
				cancel(errLeaseLost)
				return
			}
		}
	}()
	return done
}

// attempt runs the handler; a panic is an exception, and a handler that
// ignores its cancelled context is abandoned abandonAfter later.
func (w *Worker) attempt(ctx context.Context, env *runtime.Envelope) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- &runtime.PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		done <- w.r.Run(ctx, env)
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
		return fmt.Errorf("handler abandoned %v after its context ended: %w", abandonAfter, context.Cause(ctx))
	}
}
