package runtime

import (
	"context"
	"time"
)

// JobInfo describes the job a handler is running.
type JobInfo struct {
	ID    string
	Name  string
	Queue string
	// Attempt is 1 on the first run of the job.
	Attempt int
	// BatchID is the batch the job belongs to, if any: add jobs to it
	// with Inspector.Batches().Add.
	BatchID string
	// Worker is the name of the worker running the job.
	Worker string
	// DispatchedAt is when the job was dispatched (dispatcher's clock).
	DispatchedAt time.Time
	// Headers are the envelope's headers, such as a trace context set by
	// dispatch middleware (Engine.UseDispatch). Read them; do not change
	// them.
	Headers map[string]string
}

type jobInfoKey struct{}

// WithJobInfo returns a context carrying info; the worker sets it for
// every handler.
func WithJobInfo(ctx context.Context, info JobInfo) context.Context {
	return context.WithValue(ctx, jobInfoKey{}, info)
}

// JobInfoFrom returns the info of the job a handler's context belongs
// to; ok is false outside a handler.
func JobInfoFrom(ctx context.Context) (info JobInfo, ok bool) {
	info, ok = ctx.Value(jobInfoKey{}).(JobInfo)
	return info, ok
}
