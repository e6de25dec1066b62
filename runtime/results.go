package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Results: what a handler hands back to whoever dispatched its job.
//
// A handler records a result (RecordResult, or by returning it from a
// handler registered with RegisterResult); the ack that finishes the job
// stores it, in the same script call (finish.lua), under the job's queue
// hash tag with a lifetime of EngineConfig.ResultRetention, and pushes
// to the job's done list. Await waits on that list with short BLPOPs,
// so it wakes as soon as the ack lands and still honours a deadline
// under a second; ReadResult reads a result later.

// resultSlot holds what the handler of the running job recorded.
type resultSlot struct {
	limit int
	data  []byte
}

type resultKey struct{}

// RecordResult records v, encoded with msgpack, as the result of the job
// whose handler runs with ctx; a later call replaces it. The result is
// stored when the job is acked, atomically with the ack, and only then:
// a job that fails, is released or whose lease was lost leaves no
// result. Its encoding must be at most EngineConfig.MaxResultSize bytes,
// or RecordResult refuses it with a *ResultTooLargeError and records
// nothing. Outside a worker's job (DispatchSync, a plain context) there
// is nowhere to keep it: RecordResult returns nil and drops it.
func RecordResult(ctx context.Context, v any) error {
	slot, _ := ctx.Value(resultKey{}).(*resultSlot)
	if slot == nil {
		return nil
	}
	b, err := Encode(v)
	if err != nil {
		return fmt.Errorf("record result: %w", err)
	}
	if len(b) > slot.limit {
		return &ResultTooLargeError{Size: len(b), Limit: slot.limit}
	}
	slot.data = b
	return nil
}

// RegisterResult routes jobs named name to handle, which returns the
// job's result: on success it is recorded as by RecordResult. A result
// over EngineConfig.MaxResultSize fails the job at once (FailRequest)
// with the *ResultTooLargeError as its failure. Generated Register
// functions call it for job types annotated `result=Type`.
func RegisterResult[T, R any](r *Router, name string, handle func(ctx context.Context, job T) (R, error), opts ...RouteOption[T]) {
	Register(r, name, func(ctx context.Context, job T) error {
		v, err := handle(ctx, job)
		if err != nil {
			return err
		}
		if err := RecordResult(ctx, v); err != nil {
			return FailRequest(err)
		}
		return nil
	}, opts...)
	r.mu.Lock()
	if rt := r.routes[name]; rt != nil {
		rt.result = true
	}
	r.mu.Unlock()
}

// ResultHandler runs a job and returns its result; Handle methods of
// job types annotated `result=Type` have this shape.
type ResultHandler[R any] interface {
	Handle(ctx context.Context) (R, error)
}

// HandleResultMethod adapts a job type with its own result-returning
// Handle method into a handler for RegisterResult.
func HandleResultMethod[T ResultHandler[R], R any](ctx context.Context, job T) (R, error) {
	return job.Handle(ctx)
}

// doneTTL is how long a job's done list outlives its push: an Await
// between two BLPOPs finds the element on its next one.
const doneTTL = 10 * time.Second

// awaitStep is the longest single BLPOP of Await: its deadline is
// checked at least this often.
const awaitStep = 300 * time.Millisecond

// ResultReader is what Await and ReadResult need of a dispatcher: *Engine
// has it.
type ResultReader interface {
	AwaitResult(ctx context.Context, queue, id string) ([]byte, error)
	ReadResult(ctx context.Context, queue, id string) ([]byte, bool, error)
}

// ReadResult returns the encoded result of job id of queue: ok is false
// while the job has none (not finished, or its result expired after
// EngineConfig.ResultRetention). A job in the failed store returns a
// *JobFailedError.
func (e *Engine) ReadResult(ctx context.Context, queue, id string) ([]byte, bool, error) {
	if err := e.resultQueue(queue); err != nil {
		return nil, false, err
	}
	if id == "" {
		return nil, false, fmt.Errorf("%w: read a result on queue %q: empty job ID: pass the ID that dispatching the job returned", ErrInvalid, queue)
	}
	p, err := e.peekResult(ctx, queue, id)
	if err != nil || p.Found || !p.Failed {
		return p.Result, p.Found, err
	}
	return nil, false, e.failedError(ctx, queue, id)
}

// AwaitResult waits until job id of queue has a result and returns it
// encoded, or until ctx ends: at its deadline it returns an
// *AwaitTimeoutError, and on a cancel at once ctx's error. A job that
// fails for good returns a *JobFailedError; an ID the queue does not
// hold, with no result and no failure, an *UnknownJobError at once
// (Dispatch writes the job before it returns its ID, so an Await right
// after it finds the job). It waits with BLPOPs of at most 300 ms on
// the job's done list, which the ack of a job with a result pushes to,
// checking the result, the failed store and the queue between them.
func (e *Engine) AwaitResult(ctx context.Context, queue, id string) ([]byte, error) {
	if err := e.resultQueue(queue); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, fmt.Errorf("%w: await a job on queue %q: empty job ID: pass the ID that dispatching the job returned", ErrInvalid, queue)
	}
	began := time.Now()
	done := e.keys.Done(queue, id)
	for {
		// A look that a deadline cut short would hide a result already
		// there: it runs to its end, as the BLPOP does.
		p, err := e.peekResult(context.WithoutCancel(ctx), queue, id)
		switch {
		case err != nil:
			return nil, err
		case p.Found:
			return p.Result, nil
		case p.Failed:
			return nil, e.failedError(ctx, queue, id)
		case !p.Pending:
			return nil, &UnknownJobError{Queue: queue, ID: id}
		}
		step := cmp.Or(e.awaitStep, awaitStep)
		if d, has := ctx.Deadline(); has {
			step = min(step, time.Until(d))
		}
		if step < time.Millisecond {
			if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, &AwaitTimeoutError{Queue: queue, ID: id, Waited: time.Since(began)}
			}
			return nil, fmt.Errorf("await job %s on queue %q: %w", id, queue, ctx.Err())
		}
		if err := e.awaitPop(ctx, done, step); err != nil {
			return nil, fmt.Errorf("await job %s on queue %q: %w", id, queue, err)
		}
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("await job %s on queue %q: %w", id, queue, ctx.Err())
		}
	}
}

// awaitPop waits up to d on the done list, and returns when it has
// waited or at once when ctx ends. The BLPOP runs on a context of its
// own, which ending ctx leaves alone: ending it early would drop the
// connection rather than let Redis answer; it finishes in the
// background, within d, and goes back to the pool.
func (e *Engine) awaitPop(ctx context.Context, done string, d time.Duration) error {
	popped := make(chan error, 1)
	go func() { popped <- e.store.Pop(context.WithoutCancel(ctx), done, d) }()
	select {
	case err := <-popped:
		return err
	case <-ctx.Done():
		return nil // the caller reads ctx's end
	}
}

// resultQueue checks that queue can hold results where Await looks.
func (e *Engine) resultQueue(queue string) error {
	if err := validateQueueOrPartition(queue); err != nil {
		return err
	}
	if e.partitionsOf(queue) != nil {
		return fmt.Errorf("%w: queue %q is partitioned: read results from the partition the job went to (PartitionNames)", ErrInvalid, queue)
	}
	return nil
}

// peekResult reads job id's result, whether the failed store has it and
// whether the queue has it, in one round trip.
func (e *Engine) peekResult(ctx context.Context, queue, id string) (jobrdb.Peek, error) {
	qk := e.keys.Queue(queue)
	p, err := e.store.PeekResult(ctx, e.keys.Result(queue, id), qk.FailedInfo, qk.Payloads, id)
	if err != nil {
		return jobrdb.Peek{}, fmt.Errorf("read result of job %s on queue %q: %w", id, queue, err)
	}
	return p, nil
}

// failedError is the *JobFailedError of job id, in the failed store.
func (e *Engine) failedError(ctx context.Context, queue, id string) error {
	f, ok, err := e.inspector().Failed().Get(ctx, queue, id)
	if err != nil {
		return fmt.Errorf("read failure of job %s on queue %q: %w", id, queue, err)
	}
	if !ok { // retried or forgotten since
		return &JobFailedError{Queue: queue, ID: id, Message: "(no longer in the failed store)"}
	}
	return &JobFailedError{Queue: queue, ID: id, Name: f.Name, Message: f.Error, Attempts: f.Attempts, Cause: failureCause(f.Error)}
}

// resultReader finds the reader of job's results as Dispatch finds its
// dispatcher, and the queue it goes to by its options.
func resultReader(ctx context.Context, job Job) (ResultReader, string, error) {
	o := job.JobOptions()
	d, err := DispatcherFor(ctx, o.Connection)
	if err != nil {
		return nil, "", err
	}
	rr, ok := d.(ResultReader)
	if !ok {
		return nil, "", fmt.Errorf("%w: dispatcher %T cannot read results", ErrInvalid, d)
	}
	return rr, cmp.Or(o.Queue, DefaultQueue), nil
}

// Await waits for the result of job id, dispatched as job's type to the
// queue of its options (use AwaitOn for a job sent elsewhere), and
// decodes it into R. ctx's deadline is the timeout: past it Await returns
// an *AwaitTimeoutError (errors.Is ErrAwaitTimeout). A job that failed
// for good returns a *JobFailedError carrying its failure. Generated
// Await methods call it.
func Await[R any](ctx context.Context, job Job, id string) (R, error) {
	rr, queue, err := resultReader(ctx, job)
	if err != nil {
		var zero R
		return zero, err
	}
	return awaitOn[R](ctx, rr, queue, id)
}

// AwaitOn is Await for a job of queue, through the default dispatcher
// (or the one WithDispatcher put on ctx).
func AwaitOn[R any](ctx context.Context, queue, id string) (R, error) {
	var zero R
	d, err := DispatcherFor(ctx, "")
	if err != nil {
		return zero, err
	}
	rr, ok := d.(ResultReader)
	if !ok {
		return zero, fmt.Errorf("%w: dispatcher %T cannot read results", ErrInvalid, d)
	}
	return awaitOn[R](ctx, rr, queue, id)
}

func awaitOn[R any](ctx context.Context, rr ResultReader, queue, id string) (R, error) {
	var zero R
	b, err := rr.AwaitResult(ctx, queue, id)
	if err != nil {
		return zero, err
	}
	v, err := Decode[R](b)
	if err != nil {
		return zero, fmt.Errorf("%w: result of job %s does not decode into %T: %v", ErrDecode, id, zero, err)
	}
	return v, nil
}

// ReadJobResult reads the result of job id, dispatched as job's type to
// the queue of its options, without waiting: ok is false while it has
// none. A job that failed for good returns a *JobFailedError. Generated
// Result methods call it.
func ReadJobResult[R any](ctx context.Context, job Job, id string) (R, bool, error) {
	var zero R
	rr, queue, err := resultReader(ctx, job)
	if err != nil {
		return zero, false, err
	}
	b, ok, err := rr.ReadResult(ctx, queue, id)
	if err != nil || !ok {
		return zero, false, err
	}
	v, err := Decode[R](b)
	if err != nil {
		return zero, false, fmt.Errorf("%w: result of job %s does not decode into %T: %v", ErrDecode, id, zero, err)
	}
	return v, true, nil
}
