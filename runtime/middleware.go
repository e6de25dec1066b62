package runtime

import (
	"context"
	"fmt"
)

// Middleware wraps the handling of a job (Laravel's job middleware). It
// runs next, the rest of the middleware and then the handler, or does
// not, and returns what the job's handler would: nil, an error, or one
// of the control errors (ReleaseRequest, FailRequest, DeleteRequest).
//
// A worker's middleware (WorkerConfig.Middleware) wraps every job it
// runs; a job type's own (JobMiddleware) wraps its jobs, inside the
// worker's. The package ships RateLimited, WithoutOverlapping,
// ThrottlesExceptions, SkipIf, SkipUnless and SkipWhen.
type Middleware interface {
	Handle(ctx context.Context, next func(context.Context) error) error
}

// MiddlewareFunc adapts a function to Middleware.
type MiddlewareFunc func(ctx context.Context, next func(context.Context) error) error

// Handle calls f.
func (f MiddlewareFunc) Handle(ctx context.Context, next func(context.Context) error) error {
	return f(ctx, next)
}

// JobMiddleware is implemented by a job type whose jobs run through
// middleware of their own, built from the job's fields:
//
//	func (j SyncAccount) Middleware() []runtime.Middleware {
//		return []runtime.Middleware{
//			runtime.WithoutOverlapping(j.AccountID),
//			runtime.RateLimited("crm-api", 10, time.Second),
//		}
//	}
type JobMiddleware interface {
	Middleware() []Middleware
}

// through runs handle inside ms, the first outermost.
func through(ctx context.Context, ms []Middleware, handle func(context.Context) error) error {
	if len(ms) == 0 {
		return handle(ctx)
	}
	return ms[0].Handle(ctx, func(ctx context.Context) error { return through(ctx, ms[1:], handle) })
}

// runJob runs handle for job, inside the job's own middleware if its type
// has some. The router calls it for every job, queued or sync.
func runJob[T any](ctx context.Context, job T, handle func(context.Context, T) error) error {
	jm, ok := any(job).(JobMiddleware)
	if !ok {
		return handle(ctx, job)
	}
	return through(ctx, jm.Middleware(), func(ctx context.Context) error { return handle(ctx, job) })
}

type engineKey struct{}

// engineFrom returns the engine middleware keeps its state on: the
// worker's, or, under DispatchSync, the default dispatcher if it is an
// *Engine.
func engineFrom(ctx context.Context) (*Engine, error) {
	if e, ok := ctx.Value(engineKey{}).(*Engine); ok {
		return e, nil
	}
	if d, err := DispatcherFor(ctx, ""); err == nil {
		if e, ok := d.(*Engine); ok {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w: this middleware keeps its state in Redis: run the job on a worker, or dispatch through an *Engine", ErrInvalid)
}

// Skip is the middleware SkipIf, SkipUnless and SkipWhen return: a job it
// skips is deleted without running, as if it had succeeded (its chain
// goes on, its batch counts it), as Laravel's Skip does.
type Skip struct {
	when func(context.Context) bool
}

// SkipIf skips the job if cond holds.
func SkipIf(cond bool) *Skip { return &Skip{when: func(context.Context) bool { return cond }} }

// SkipUnless skips the job unless cond holds.
func SkipUnless(cond bool) *Skip { return SkipIf(!cond) }

// SkipWhen skips the job if fn, called as the job is about to run,
// returns true.
func SkipWhen(fn func(ctx context.Context) bool) *Skip { return &Skip{when: fn} }

// Handle runs next unless the job is skipped.
func (s *Skip) Handle(ctx context.Context, next func(context.Context) error) error {
	if s.when(ctx) {
		return DeleteRequest()
	}
	return next(ctx)
}

// releasingMiddleware names the middleware of T's zero value that
// release jobs they hold back. A Middleware method that panics on the
// zero value names none.
func releasingMiddleware[T any]() (names []string) {
	jm, ok := any(*new(T)).(JobMiddleware)
	if !ok {
		return nil
	}
	defer func() {
		if recover() != nil {
			names = nil
		}
	}()
	return releasing(jm.Middleware())
}

// releasing names the middleware of ms that release jobs they hold back.
func releasing(ms []Middleware) []string {
	var names []string
	for _, m := range ms {
		switch m := m.(type) {
		case *RateLimit:
			if !m.dontRelease {
				names = append(names, fmt.Sprintf("RateLimited(%q)", m.key))
			}
		case *Overlap:
			if !m.dontRelease {
				names = append(names, "WithoutOverlapping")
			}
		case *ExceptionThrottle:
			names = append(names, "ThrottlesExceptions")
		}
	}
	return names
}
