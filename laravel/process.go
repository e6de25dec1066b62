package laravel

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jobgen/jobgen/internal/attempt"
	"github.com/jobgen/jobgen/runtime"
)

// errLeaseLost cancels a job whose reservation another worker took.
var errLeaseLost = errors.New("laravel: reservation lost (retry_after ran out)")

// abandonAfter is how long a handler may ignore its cancelled context.
const abandonAfter = 2 * time.Second

// job is a popped job that passed its checks, ready to run.
type job struct {
	r  *Reserved
	mp *mapping
	// ch is the rest of the job's chain, or nil.
	ch       *chain
	body     []byte
	maxTries int64
	timeout  time.Duration
}

// outcome is how an attempt of a job ended.
type outcome struct {
	// err is the handler's error.
	err error
	// cause is why the job's context ended: errLeaseLost,
	// runtime.ErrTimeout, or a stop.
	cause error
	took  time.Duration
}

// process runs one popped job and settles it.
func (w *Worker) process(ctx context.Context, r *Reserved) {
	// Settling uses a context that outlives a stop, so a finished job
	// is deleted even while the worker stops.
	settle := context.WithoutCancel(ctx)
	j, ok := w.prepare(settle, r)
	if !ok {
		return
	}
	w.finish(ctx, settle, j, w.run(ctx, j))
}

// prepare maps and decodes a popped job, and fails it (under settle)
// if it cannot run: it does not decode, or an earlier attempt used up
// its tries or its time. It reports whether the job is to run.
func (w *Worker) prepare(settle context.Context, r *Reserved) (*job, bool) {
	if r.DecodeErr != nil {
		if why := notAJob(r.Raw); why != "" {
			// No worker can run it, PHP's included: failed whatever
			// FailUnmapped says, or it would block its queue.
			w.fail(settle, r, nil, fmt.Errorf("%w: the payload is not a Laravel job: %s: %.200q", runtime.ErrDecode, why, r.Raw))
			return nil, false
		}
		w.fail(settle, r, nil, fmt.Errorf("%w: %w", runtime.ErrDecode, r.DecodeErr))
		return nil, false
	}
	p := r.Payload
	mp, err := w.m.forPayload(p)
	if err != nil {
		w.fail(settle, r, nil, err)
		return nil, false
	}
	j := &job{r: r, mp: mp, maxTries: int64(w.cfg.Tries), timeout: w.cfg.Timeout}
	if p.MaxTries != nil {
		j.maxTries = *p.MaxTries
	}
	if err := alreadyExceeded(p, j.maxTries); err != nil {
		w.fail(settle, r, mp, err)
		return nil, false
	}
	if j.body, err = mp.body(p); err != nil {
		w.fail(settle, r, mp, fmt.Errorf("%w: %w", runtime.ErrDecode, err))
		return nil, false
	}
	if cmd, ok, _ := w.m.command(p); ok {
		if j.ch, err = w.m.chainOf(cmd.Command, cmd.BatchID); err != nil {
			// Only Laravel's worker can finish it, and FailUnmapped
			// had the worker take it (else it is left on its queue).
			w.fail(settle, r, mp, fmt.Errorf("%w (WorkerConfig.FailUnmapped is set: a Go worker fails what only Laravel's worker can finish)", err))
			return nil, false
		}
	}
	if p.Timeout != nil && *p.Timeout > 0 {
		j.timeout = time.Duration(*p.Timeout) * time.Second
	}
	if w.superseded(settle, j) { // debounce.go
		return nil, false
	}
	return j, true
}

// alreadyExceeded is Laravel's markJobAsFailedIfAlreadyExceedsMaxAttempts
// (internal/attempt): the error of a job whose earlier attempt did not
// finish (its worker died or timed out) and used up its retryUntil or its
// tries; nil if it may run.
func alreadyExceeded(p Payload, maxTries int64) error {
	if err := limitsOf(p, maxTries).Admit(int(p.Attempts), nowSecond()); err != nil {
		return fmt.Errorf("%s: %w", p.DisplayName, err)
	}
	return nil
}

// limitsOf is what bounds p's attempts, with maxTries for its tries.
func limitsOf(p Payload, maxTries int64) attempt.Limits {
	l := attempt.Limits{Tries: int(maxTries), FailOnTimeout: p.FailOnTimeout}
	if p.RetryUntil != nil {
		l.RetryUntil = time.Unix(*p.RetryUntil, 0)
	}
	if p.MaxExceptions != nil {
		l.MaxExceptions = int(*p.MaxExceptions)
	}
	return l
}

// nowSecond is now in whole seconds, the precision Laravel compares a
// job's retryUntil at.
func nowSecond() time.Time { return time.Unix(time.Now().Unix(), 0) }

// run runs the job's handler under ctx with its timeout, extending its
// reservation while it runs.
func (w *Worker) run(ctx context.Context, j *job) outcome {
	r, p := j.r, j.r.Payload
	env := &runtime.Envelope{ID: p.UUID, Name: j.mp.name, Queue: r.Queue, Body: j.body}
	info := runtime.JobInfo{ID: p.UUID, Name: j.mp.name, Queue: r.Queue, Attempt: int(p.Attempts)}

	jobCtx, cancel := context.WithCancelCause(runtime.WithJobInfo(ctx, info))
	defer cancel(nil)
	jobCtx, cancelTimeout := context.WithTimeoutCause(jobCtx, j.timeout, runtime.ErrTimeout)
	defer cancelTimeout()
	heartbeatDone := w.heartbeat(jobCtx, r, cancel)
	w.emit(runtime.JobProcessing, r, j.mp.name, nil)
	began := time.Now()
	herr := w.attempt(jobCtx, env)
	o := outcome{err: herr, took: time.Since(began), cause: context.Cause(jobCtx)}
	cancel(nil)
	<-heartbeatDone
	return o
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
