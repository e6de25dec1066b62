package runtime

import (
	"context"
	"time"
)

// DispatchKind says what call a push comes from, for dispatch
// middleware that reports one span or count per call.
type DispatchKind int

const (
	// DispatchKindOne pushes one job: Dispatch, Push, Later.
	DispatchKindOne DispatchKind = iota + 1
	// DispatchKindMany pushes several jobs in one PushMany call.
	DispatchKindMany
	// DispatchKindBatch pushes the jobs of a batch (NewBatch, or
	// BatchStore.Add).
	DispatchKindBatch
	// DispatchKindLink pushes the next link of a chain; the worker that
	// finished the link before it pushes it (DispatchCall.From).
	DispatchKindLink
	// DispatchKindEvent pushes the jobs of an event's queued listeners (Fire).
	DispatchKindEvent
)

func (k DispatchKind) String() string {
	switch k {
	case DispatchKindOne:
		return "one"
	case DispatchKindMany:
		return "many"
	case DispatchKindBatch:
		return "batch"
	case DispatchKindLink:
		return "link"
	case DispatchKindEvent:
		return "event"
	}
	return "DispatchKind(?)"
}

// DispatchCall is one push as dispatch middleware sees it, before its
// envelopes are encoded: middleware may set their Headers.
type DispatchCall struct {
	Kind DispatchKind
	// Jobs are the jobs pushed, each with an ID and a dispatch time.
	Jobs []Outgoing
	// From is the job whose success pushes a chain link (DispatchKindLink);
	// nil for the other kinds.
	From *JobInfo
}

// DispatchMiddleware wraps every push of an engine: it may set headers
// on the envelopes of out (a trace context, say), then calls next to
// push them, and sees its error. It runs in the pushing goroutine.
type DispatchMiddleware func(ctx context.Context, out *DispatchCall, next func(context.Context) error) error

// UseDispatch adds middleware that wraps every push of e, the first
// outermost: Dispatch, PushMany, batches, and the chain links that
// workers push through e. Call it at start-up, before e pushes.
func (e *Engine) UseDispatch(mw ...DispatchMiddleware) {
	for {
		old := e.dispatchMW.Load()
		var ms []DispatchMiddleware
		if old != nil {
			ms = append(ms, *old...)
		}
		ms = append(ms, mw...)
		if e.dispatchMW.CompareAndSwap(old, &ms) {
			return
		}
	}
}

// hasDispatchMiddleware says whether e has dispatch middleware.
func (e *Engine) hasDispatchMiddleware() bool {
	ms := e.dispatchMW.Load()
	return ms != nil && len(*ms) > 0
}

// pushThrough runs push inside e's dispatch middleware, if it has any.
func (e *Engine) pushThrough(ctx context.Context, out *DispatchCall, push func(context.Context) error) error {
	if !e.hasDispatchMiddleware() {
		return push(ctx)
	}
	ms := e.dispatchMW.Load()
	now := time.Now().UnixMilli()
	for _, j := range out.Jobs { // as stored() would, so middleware sees them
		if j.Envelope.ID == "" {
			j.Envelope.ID = newIDAt(now)
		}
		if j.Envelope.DispatchedAt == 0 {
			j.Envelope.DispatchedAt = now
		}
	}
	return throughDispatch(ctx, *ms, out, push)
}

func throughDispatch(ctx context.Context, ms []DispatchMiddleware, out *DispatchCall, push func(context.Context) error) error {
	if len(ms) == 0 {
		return push(ctx)
	}
	return ms[0](ctx, out, func(ctx context.Context) error { return throughDispatch(ctx, ms[1:], out, push) })
}

// pushKind tells the kind of a PushMany call from its jobs.
func pushKind(jobs []Outgoing) DispatchKind {
	if len(jobs) > 0 && jobs[0].Envelope.BatchID != "" {
		return DispatchKindBatch
	}
	if len(jobs) == 1 {
		return DispatchKindOne
	}
	return DispatchKindMany
}
