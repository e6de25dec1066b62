package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// A job is unique when its options set UniqueFor (the `unique_for`
// annotation): while one is queued or running, dispatching another with
// the same unique key does nothing and returns a *DuplicateError
// (Laravel's ShouldBeUnique). The key is the job's wire name, followed by
// ":" and its UniqueID if it implements UniqueJob.
//
// The lock is taken at dispatch and released when the job succeeds (or
// is deleted or skipped) or fails for good; a release for a retry keeps
// it. If the job's worker dies, the lock expires UniqueFor after the
// dispatch. Jobs dispatched inside a batch, and the links of a chain
// after the first, take no lock.

// UniqueJob is implemented by a job type that is unique per value rather
// than per type: two jobs conflict only if their UniqueIDs are equal.
type UniqueJob interface {
	UniqueID() string
}

// UniqueUntilProcessingJob is implemented by a unique job type whose lock
// is released when its handler starts rather than when it finishes, so
// another copy can be queued while it runs (Laravel's
// ShouldBeUniqueUntilProcessing).
type UniqueUntilProcessingJob interface {
	UniqueUntilProcessing() bool
}

// DispatchResult is the outcome of a dispatch, for callers that do not
// treat a duplicate as an error.
type DispatchResult struct {
	// ID is the dispatched job's ID, or, for a duplicate, the ID of the
	// job that holds the unique key.
	ID string
	// Duplicate is set when nothing was pushed because a unique job with
	// the same key is queued or running.
	Duplicate bool
}

// ResultOf reads the result of any Dispatch method, turning a
// *DuplicateError into a DispatchResult with Duplicate set and no error:
//
//	res, err := runtime.ResultOf(SendReport{Day: d}.Dispatch(ctx))
//	if err == nil && res.Duplicate { ... }
func ResultOf(id string, err error) (DispatchResult, error) {
	var dup *DuplicateError
	switch {
	case err == nil:
		return DispatchResult{ID: id}, nil
	case errors.As(err, &dup):
		return DispatchResult{ID: dup.HolderID, Duplicate: true}, nil
	}
	return DispatchResult{}, err
}

// UniqueKey returns the unique key of job: its wire name, followed by ":"
// and its UniqueID if it implements UniqueJob.
func UniqueKey(job Job) string {
	if u, ok := underlying(job).(UniqueJob); ok {
		return job.JobName() + ":" + u.UniqueID()
	}
	return job.JobName()
}

// setUnique marks env with job's unique key, if job is unique.
func setUnique(env *Envelope, job Job) {
	if job.JobOptions().UniqueFor <= 0 {
		return
	}
	env.UniqueKey = UniqueKey(job)
	if u, ok := underlying(job).(UniqueUntilProcessingJob); ok && u.UniqueUntilProcessing() {
		env.UniqueUntilProcessing = true
	}
}

// lockUnique takes env's unique lock for ttl, with env's ID as owner. It
// returns a *DuplicateError if another job holds it, and a function that
// gives the lock back, for a push that fails.
func (e *Engine) lockUnique(ctx context.Context, env *Envelope, ttl time.Duration) (undo func(), err error) {
	if env.UniqueKey == "" {
		return func() {}, nil
	}
	k := e.keys.Unique(env.UniqueKey)
	reply, err := e.store.RunOne(ctx, call{Script: scriptLock, Keys: []string{k}, Args: []any{env.ID, max(ttl.Milliseconds(), 1)}}).Slice()
	switch {
	case err != nil:
		return nil, fmt.Errorf("dispatch %s: take unique lock %q: %w", env.Name, env.UniqueKey, err)
	case len(reply) != 2:
		return nil, fmt.Errorf("dispatch %s: take unique lock %q: unexpected reply %v", env.Name, env.UniqueKey, reply)
	}
	if jobrdb.Int(reply[0]) != 1 {
		holder, _ := reply[1].(string)
		return nil, &DuplicateError{Name: env.Name, Key: env.UniqueKey, HolderID: holder}
	}
	return func() { _ = e.unlock(context.WithoutCancel(ctx), k, env.ID) }, nil
}

// unlock releases lock key if owner holds it.
func (e *Engine) unlock(ctx context.Context, key, owner string) error {
	return e.store.RunOne(ctx, call{Script: scriptUnlock, Keys: []string{key}, Args: []any{owner}}).Err()
}

// uniques is the worker's step for unique jobs (worker_steps.go): an
// until-processing lock is released as the handler starts, any other as
// the job ends for good.
type uniques struct{ busEnv }

func (s uniques) before(ctx context.Context, _ Reservation, env *Envelope) bool {
	s.release(ctx, env, true)
	return false
}
func (uniques) succeeded(context.Context, Reservation, *Envelope, *Finish) error { return nil }
func (uniques) failed(context.Context, *Envelope, error)                         {}
func (s uniques) ended(ctx context.Context, env *Envelope)                       { s.release(ctx, env, false) }
func (uniques) hasFailWork(env *Envelope) bool {
	return env.UniqueKey != "" && !env.UniqueUntilProcessing
}

// release releases env's unique lock, if it holds one of the kind
// released at this point: atStart for the until-processing kind, as its
// handler starts; otherwise as the job ends for good.
func (s uniques) release(ctx context.Context, env *Envelope, atStart bool) {
	if env.UniqueKey == "" || env.UniqueUntilProcessing != atStart {
		return
	}
	if err := s.e.unlock(ctx, s.e.keys.Unique(env.UniqueKey), env.ID); err != nil {
		s.log.Error("releasing a unique lock failed; it expires by itself", "job", env.Name, "id", env.ID, "key", env.UniqueKey, "err", err)
	}
}
