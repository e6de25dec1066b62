package runtime

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jobgen/jobgen/internal/progress"
)

// jobContext is the context a handler runs with: cancelled with a cause
// when the job times out (ErrTimeout), loses its lease or is stopped with
// the worker; with the attempt's deadline, the job's JobInfo, and the
// engine its middleware keeps state on (engineFrom).
//
// It is one value over one cancelCtx and one timer. Built from the
// standard contexts it took four (a cancel for the causes, a timer
// context for the timeout below it, a value for the info), and the timer
// context registered itself with its parent: a few microseconds a job.
type jobContext struct {
	context.Context // from context.WithCancelCause
	deadline        time.Time
	info            JobInfo
	engine          *Engine
	// ref is the job's reservation, and progress what it reported
	// (Progress), if it did.
	ref      Ref
	progress atomic.Pointer[progress.Slot]
	// completing: the handler called CompleteTx (complete_tx.go).
	completing atomic.Bool
	result     resultSlot // what the handler recorded (RecordResult)
	step       *stepRun   // the step of a workflow it runs, if it is one
}

// newJobContext returns a job's context, derived from parent, that ends
// with cause ErrTimeout timeout after began (now), and its cancel.
// Cancelling it stops the timer; the first cause given wins.
func newJobContext(parent context.Context, began time.Time, timeout time.Duration, info JobInfo, e *Engine) (*jobContext, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &jobContext{Context: ctx, deadline: began.Add(timeout), info: info, engine: e}
	if e != nil {
		c.result.limit = e.cfg.MaxResultSize
	}
	if d, ok := parent.Deadline(); ok && d.Before(c.deadline) {
		c.deadline = d
	}
	t := time.AfterFunc(timeout, func() { cancel(ErrTimeout) })
	return c, func(cause error) {
		t.Stop()
		cancel(cause)
	}
}

func (c *jobContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *jobContext) Value(key any) any {
	switch key.(type) {
	case jobInfoKey:
		return c.info
	case stepKey:
		if c.step != nil {
			return c.step
		}
		return nil
	case resultKey:
		if c.engine != nil {
			return &c.result
		}
	case engineKey:
		if c.engine != nil {
			return c.engine
		}
	case jobContextKey:
		return c
	}
	return c.Context.Value(key)
}
