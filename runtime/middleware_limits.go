package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// The middleware that keep state in Redis. They find their engine on
// the context: a worker puts its own there; under DispatchSync it is the
// default dispatcher, if that is an *Engine.
//
// Each releases a job it holds back with ReleaseRequest, as Laravel's do: the
// release does not count as an exception, but the attempt is used, so
// give such jobs enough Tries (or a RetryUntil) for the waits.
// RateLimited(...).WithoutAttempt() defers them instead (DeferRequest),
// which uses no attempt.

// RateLimit is the middleware RateLimited returns.
type RateLimit struct {
	key         string
	limit       int
	per         time.Duration
	dontRelease bool
	noAttempt   bool
}

// RateLimited lets at most limit jobs start in any span of per, counted
// in Redis under key across every worker and job type that use it (a
// sliding log, on the Redis clock). A job over the limit is released to
// try again when a start frees up (Laravel's RateLimited). As in
// Laravel, that release uses the attempt: a job over the limit N times
// has N attempts more, and fails once they pass its Tries; WithoutAttempt
// keeps its attempts as they were.
func RateLimited(key string, limit int, per time.Duration) *RateLimit {
	return &RateLimit{key: key, limit: limit, per: per}
}

// DontRelease deletes a job over the limit instead of releasing it.
func (r *RateLimit) DontRelease() *RateLimit {
	r.dontRelease = true
	return r
}

// WithoutAttempt defers a job over the limit (DeferRequest) rather than
// releasing it: the attempt is given back, so the job's attempts are the
// same when it finally runs as they were before the limiter held it
// back, and a job with Tries 1 is never failed by the limiter. Laravel
// has no counterpart; its RateLimited always uses the attempt.
func (r *RateLimit) WithoutAttempt() *RateLimit {
	r.noAttempt = true
	return r
}

// Handle runs next if the limit allows.
func (r *RateLimit) Handle(ctx context.Context, next func(context.Context) error) error {
	if r.limit < 1 || r.per < time.Millisecond {
		return FailRequest(fmt.Errorf("%w: RateLimited(%q, %d, %v): want a limit of at least 1 per at least 1ms", ErrInvalid, r.key, r.limit, r.per))
	}
	e, err := engineFrom(ctx)
	if err != nil {
		return err
	}
	reply, err := e.store.RunOne(ctx, call{Script: scriptRateLimit, Keys: []string{e.keys.Limiter(r.key)}, Args: []any{r.limit, r.per.Milliseconds(), newToken()}}).Int64Slice()
	if err != nil || len(reply) != 2 {
		return fmt.Errorf("rate limit %q: %v", r.key, err)
	}
	if reply[0] == 1 {
		return next(ctx)
	}
	wait := time.Duration(reply[1]) * time.Millisecond
	switch {
	case r.dontRelease:
		return DeleteRequest()
	case r.noAttempt:
		return DeferRequest(wait)
	}
	return ReleaseRequest(wait)
}

// Overlap is the middleware WithoutOverlapping returns.
type Overlap struct {
	key          string
	releaseAfter time.Duration
	expireAfter  time.Duration
	dontRelease  bool
	shared       bool
}

// WithoutOverlapping keeps two jobs with the same key from running at
// once, with a lock in Redis (Laravel's WithoutOverlapping). A job that
// finds the lock held is released, to try again after ReleaseAfter. The
// key is per job type unless Shared. The lock expires after ExpireAfter
// (default 10 minutes), so a worker that dies holding it does not hold
// it for ever: set it above the longest run of the job.
func WithoutOverlapping(key string) *Overlap {
	return &Overlap{key: key, expireAfter: 10 * time.Minute}
}

// ReleaseAfter sets how long a job that found the lock held waits
// before it is tried again. Default 0.
func (o *Overlap) ReleaseAfter(d time.Duration) *Overlap {
	o.releaseAfter = d
	return o
}

// ExpireAfter sets the lock's lifetime.
func (o *Overlap) ExpireAfter(d time.Duration) *Overlap {
	o.expireAfter = d
	return o
}

// DontRelease deletes a job that found the lock held instead of
// releasing it.
func (o *Overlap) DontRelease() *Overlap {
	o.dontRelease = true
	return o
}

// Shared makes the lock one for every job type using the key, not one
// per job type.
func (o *Overlap) Shared() *Overlap {
	o.shared = true
	return o
}

// Handle runs next holding the lock, or releases the job.
func (o *Overlap) Handle(ctx context.Context, next func(context.Context) error) error {
	e, err := engineFrom(ctx)
	if err != nil {
		return err
	}
	info, _ := JobInfoFrom(ctx)
	owner := info.ID
	if owner == "" {
		owner = NewID()
	}
	key := o.key
	if !o.shared {
		key = info.Name + ":" + key
	}
	k := e.keys.Overlap(key)
	reply, err := e.store.RunOne(ctx, call{Script: scriptLock, Keys: []string{k}, Args: []any{owner, max(o.expireAfter.Milliseconds(), 1)}}).Slice()
	if err != nil || len(reply) != 2 {
		return fmt.Errorf("lock %q without overlapping: %v", key, err)
	}
	if jobrdb.Int(reply[0]) != 1 {
		if o.dontRelease {
			return DeleteRequest()
		}
		return ReleaseRequest(o.releaseAfter)
	}
	// If the unlock fails, the lock expires by itself.
	defer func() { _ = e.unlock(context.WithoutCancel(ctx), k, owner) }()
	return next(ctx)
}

// ExceptionThrottle is the middleware ThrottlesExceptions returns.
type ExceptionThrottle struct {
	max     int
	decay   time.Duration
	backoff time.Duration
	key     string
	when    func(error) bool
}

// ThrottlesExceptions backs off a job type that keeps failing, such as
// one calling a service that is down (Laravel's ThrottlesExceptions).
// Each error its jobs return is counted in Redis and the job released to
// try again after Backoff; once maxExceptions are counted within decay of
// the first, its jobs are released without running until decay has
// passed. A success clears the count. The count is per job type unless
// By names a key.
func ThrottlesExceptions(maxExceptions int, decay time.Duration) *ExceptionThrottle {
	return &ExceptionThrottle{max: maxExceptions, decay: decay}
}

// Backoff sets how long a job that returned an error waits before it is
// tried again. Default 0.
func (x *ExceptionThrottle) Backoff(d time.Duration) *ExceptionThrottle {
	x.backoff = d
	return x
}

// By counts exceptions under key instead of the job's type.
func (x *ExceptionThrottle) By(key string) *ExceptionThrottle {
	x.key = key
	return x
}

// When counts only the errors report accepts; the others are returned
// as they are.
func (x *ExceptionThrottle) When(report func(error) bool) *ExceptionThrottle {
	x.when = report
	return x
}

// Handle runs next unless the throttle is open, and counts its error.
func (x *ExceptionThrottle) Handle(ctx context.Context, next func(context.Context) error) error {
	if x.max < 1 || x.decay < time.Millisecond {
		return FailRequest(fmt.Errorf("%w: ThrottlesExceptions(%d, %v): want at least 1 exception per at least 1ms", ErrInvalid, x.max, x.decay))
	}
	e, err := engineFrom(ctx)
	if err != nil {
		return err
	}
	key := x.key
	if key == "" {
		info, _ := JobInfoFrom(ctx)
		key = info.Name
	}
	k := e.keys.Throttle(key)
	count, ttl, err := e.store.ThrottleCount(ctx, k)
	if err != nil {
		return fmt.Errorf("throttle exceptions of %q: %w", key, err)
	}
	if count >= int64(x.max) {
		return ReleaseRequest(max(ttl, time.Millisecond))
	}
	herr := next(ctx)
	switch {
	case herr == nil:
		if err := e.store.ThrottleClear(ctx, k); err != nil {
			return fmt.Errorf("throttle exceptions of %q: clear: %w", key, err)
		}
		return nil
	case isControl(herr) || (x.when != nil && !x.when(herr)):
		return herr
	}
	if err := e.store.RunOne(ctx, call{Script: scriptHits, Keys: []string{k}, Args: []any{x.decay.Milliseconds(), newNonce()}}).Err(); err != nil {
		return fmt.Errorf("throttle exceptions of %q: count %v: %w", key, herr, err)
	}
	return ReleaseRequest(x.backoff)
}

// isControl reports whether err is one of the errors a handler returns to
// control its job, rather than an exception.
func isControl(err error) bool {
	var rel *releaseRequest
	var fail *failRequest
	return errors.As(err, &rel) || errors.As(err, &fail) || errors.Is(err, deleteRequest{})
}
