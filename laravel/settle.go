package laravel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/attempt"
	"github.com/jobgen/jobgen/runtime"
)

// finish settles a job after its attempt, as Laravel's worker does:
// release or fail it when the handler asks, delete it when it
// succeeded, else handle its exception or timeout. A job whose
// reservation was lost, or that was stopped mid-run (ctx done), is left
// alone.
func (w *Worker) finish(ctx, settle context.Context, j *job, o outcome) {
	r, p := j.r, j.r.Payload
	if errors.Is(o.cause, errLeaseLost) {
		w.log.Warn("job's reservation was lost while it ran; its result is dropped", "queue", r.Queue, "job", p.DisplayName, "uuid", p.UUID)
		return
	}
	if ctx.Err() != nil && o.err != nil {
		// Stopped mid-job: leave the reservation to retry_after, as a
		// Laravel worker that is killed does.
		return
	}
	if delay, ok := runtime.AsRelease(o.err); ok {
		if w.settle(r, w.q.Release(settle, r, delay)) {
			w.emit(runtime.JobReleased, r, j.mp.name, func(e *runtime.Event) { e.Delay, e.Duration = delay, o.took })
		}
		return
	}
	if reason, ok := runtime.AsFail(o.err); ok {
		w.fail(settle, r, j.mp, reason)
		return
	}
	if o.err == nil || runtime.IsDelete(o.err) {
		w.complete(settle, j, o.took)
		return
	}
	if errors.Is(o.err, runtime.ErrDecode) {
		w.fail(settle, r, j.mp, o.err)
		return
	}
	if errors.Is(o.cause, runtime.ErrTimeout) {
		w.timedOut(settle, j, o)
		return
	}
	w.emit(runtime.JobExceptionOccurred, r, j.mp.name, func(e *runtime.Event) { e.Err, e.Duration = o.err, o.took })
	w.exception(settle, r, j.mp, j.maxTries, o.err)
}

// complete deletes a job that succeeded or deleted itself. As Laravel's
// CallQueuedHandler, the chain's next job is pushed first (a job that
// deleted itself continues its chain too).
func (w *Worker) complete(settle context.Context, j *job, took time.Duration) {
	r := j.r
	if j.ch != nil {
		if err := j.ch.dispatchNext(settle, w.q); err != nil {
			w.log.Error("dispatch the next job of the chain; the job stays reserved until retry_after", "queue", r.Queue, "job", r.Payload.DisplayName, "err", err)
			return
		}
	}
	if w.settle(r, w.q.Delete(settle, r)) {
		w.releaseUnique(settle, j)
		w.emit(runtime.JobProcessed, r, j.mp.name, func(e *runtime.Event) { e.Duration = took })
	}
}

// timedOut fails a job that ran past its timeout if it says
// failOnTimeout, else handles the timeout as an exception that does not
// count towards maxExceptions.
func (w *Worker) timedOut(settle context.Context, j *job, o outcome) {
	r, p := j.r, j.r.Payload
	err := fmt.Errorf("%w: %s has timed out after %v: %w", runtime.ErrTimeout, p.DisplayName, j.timeout, o.err)
	w.emit(runtime.JobTimedOut, r, j.mp.name, func(e *runtime.Event) { e.Err, e.Duration = err, o.took })
	if reason := limitsOf(p, j.maxTries).AfterTimeout(int(p.Attempts), nowSecond(), err); reason != nil {
		w.fail(settle, r, j.mp, reason)
		return
	}
	w.release(settle, r, j.mp, err)
}

// exception is Laravel's handleJobException (internal/attempt): fail the
// job if this was its last try, its retryUntil passed, or it reached
// maxExceptions; else release it after its backoff.
func (w *Worker) exception(ctx context.Context, r *Reserved, mp *mapping, maxTries int64, err error) {
	p := r.Payload
	exceptions := func() (int, error) {
		n, err := w.countException(ctx, p.UUID)
		return int(n), err
	}
	reason, cerr := limitsOf(p, maxTries).AfterException(int(p.Attempts), nowSecond(), err, true, exceptions)
	if cerr != nil {
		w.log.Warn("count exception", "err", cerr)
	}
	w.forgetExceptions(ctx, p, reason)
	if reason != nil {
		w.fail(ctx, r, mp, reason)
		return
	}
	w.release(ctx, r, mp, err)
}

// release puts a job back after its backoff, for another attempt.
func (w *Worker) release(ctx context.Context, r *Reserved, mp *mapping, err error) {
	delay := w.backoff(r.Payload)
	if w.settle(r, w.q.Release(ctx, r, delay)) {
		w.emit(runtime.JobReleased, r, mp.name, func(e *runtime.Event) { e.Delay, e.Err = delay, err })
	}
}

// countException adds one to the job's exceptions, where Laravel's worker
// counts them: the cache key job-exceptions:UUID, for a day.
func (w *Worker) countException(ctx context.Context, uuid string) (int64, error) {
	key := w.q.exceptionsKey(uuid)
	var incr *redis.IntCmd
	_, err := w.q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, key)
		p.Expire(ctx, key, 24*time.Hour)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return incr.Val(), nil
}

// backoff is Laravel's calculateBackoff: the job's backoff (else the
// worker's) at the attempt just made, the last repeating.
func (w *Worker) backoff(p Payload) time.Duration {
	list := p.BackoffDelays()
	if list == nil {
		list = w.cfg.Backoff
	}
	return attempt.Backoff(list, int(p.Attempts))
}

// settle logs what went wrong with a delete or release, and reports
// whether it was done.
func (w *Worker) settle(r *Reserved, err error) bool {
	if errors.Is(err, ErrNotReserved) {
		w.log.Warn("job's reservation was gone when it finished (retry_after ran out); it may run again", "queue", r.Queue, "job", r.Payload.DisplayName, "uuid", r.Payload.UUID)
	} else if err != nil {
		w.log.Error("settle job", "queue", r.Queue, "uuid", r.Payload.UUID, "err", err)
	}
	return err == nil
}

// fail moves the job to the app's failed_jobs table (FailedJobs) or
// the failed store, with its payload as popped, deletes it from the
// Laravel queue, then runs its failed hook.
func (w *Worker) fail(ctx context.Context, r *Reserved, mp *mapping, cause error) {
	name := "laravel job"
	if r.Payload.DisplayName != "" {
		name = r.Payload.DisplayName
	}
	var err error
	if w.cfg.FailedJobs != nil {
		err = w.cfg.FailedJobs.Record(ctx, r, cause)
	} else {
		var env *runtime.Envelope
		if env, err = requeueEnvelope(w.cfg.FailedQueue, r, name); err == nil {
			_, err = w.cfg.Failed.Record(ctx, env, cause, int(r.Payload.Attempts))
		}
	}
	if err != nil {
		// Not deleted: the job comes back after retry_after.
		w.log.Error("record failed job; it stays reserved until retry_after", "queue", r.Queue, "job", name, "err", err)
		return
	}
	w.settle(r, w.q.Delete(ctx, r))
	w.log.Warn("job failed", "queue", r.Queue, "job", name, "uuid", r.Payload.UUID, "attempts", r.Payload.Attempts, "err", cause)
	mapped := ""
	if mp != nil {
		mapped = mp.name
	}
	w.emit(runtime.JobFailed, r, mapped, func(e *runtime.Event) { e.Err = cause })
	if mp != nil {
		if body, err := mp.body(r.Payload); err == nil {
			w.releaseUnique(ctx, &job{r: r, mp: mp, body: body}) // as Laravel's failed() does
			w.r.RunFailed(ctx, &runtime.Envelope{ID: r.Payload.UUID, Name: mp.name, Queue: r.Queue, Body: body}, cause)
		}
	}
}

// failedID is the failed store's ID for a Laravel job: its uuid, or for a
// payload without one, its RedisQueue id.
func failedID(r *Reserved) string {
	switch {
	case r.Payload.UUID != "":
		return r.Payload.UUID
	case r.Payload.ID != "":
		return r.Payload.ID
	}
	return runtime.NewID()
}
