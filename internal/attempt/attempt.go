// Package attempt decides what follows an attempt of a job: whether a
// reserved job may start at all, and whether an exception or a timeout
// sends it back for another attempt or fails it for good, and after
// which backoff. runtime's worker and the Laravel bridge's worker both
// decide through it, so that tries, retry-until, max exceptions,
// fail-on-timeout and backoff mean one thing in both, in Laravel's order.
//
// It decides and says why; carrying the decision out (a release, a move
// to the failed store, the events) is each worker's.
package attempt

import (
	"errors"
	"fmt"
	"time"
)

// The reasons a job fails for good, which runtime exports and documents
// under the same names.
var (
	ErrMaxAttempts   = errors.New("jobgen: job used up its tries")
	ErrMaxExceptions = errors.New("jobgen: job reached its maximum exceptions")
	ErrRetryUntil    = errors.New("jobgen: job's retry-until time has passed")
)

// Limits bound a job's attempts.
type Limits struct {
	// Tries is the attempts allowed; 0 is no limit. While RetryUntil is
	// set, it is not looked at (Laravel: retryUntil takes precedence).
	Tries int
	// RetryUntil, unless zero, is when the job stops being retried.
	RetryUntil time.Time
	// MaxExceptions, if positive, fails the job at that many exceptions,
	// whatever tries remain.
	MaxExceptions int
	// FailOnTimeout fails the job at its first timeout.
	FailOnTimeout bool
}

// Admit says why a job may not start attempt n (1 for the first) at now,
// or nil if it may: an earlier attempt that did not finish (its worker
// died, or it ran past its lease) used up the job's retry-until or its
// tries. Laravel's markJobAsFailedIfAlreadyExceedsMaxAttempts.
func (l Limits) Admit(n int, now time.Time) error {
	switch {
	case !l.RetryUntil.IsZero() && now.After(l.RetryUntil):
		return fmt.Errorf("%w (%s)", ErrRetryUntil, l.RetryUntil.UTC().Format(time.RFC3339))
	case l.RetryUntil.IsZero() && l.Tries > 0 && n > l.Tries:
		return fmt.Errorf("%w: attempt %d of %d (an earlier attempt did not finish)", ErrMaxAttempts, n, l.Tries)
	}
	return nil
}

// AfterException says what follows attempt n that ended in err at now:
// nil to release the job for another attempt after its backoff, or the
// reason to fail it, which wraps err. counts says whether err counts as
// an exception (a timeout uses up the attempt but is none); exceptions
// returns the job's exceptions so far, this one included, and is called
// only when the answer depends on it. Laravel's handleJobException: the
// retry-until, then the tries, then the exceptions.
func (l Limits) AfterException(n int, now time.Time, err error, counts bool, exceptions func() (int, error)) (fail error, countErr error) {
	switch {
	case !l.RetryUntil.IsZero():
		if !now.Before(l.RetryUntil) {
			return fmt.Errorf("%w: %w", ErrRetryUntil, err), nil
		}
	case l.Tries > 0 && n >= l.Tries:
		return &triesError{n: n, tries: l.Tries, err: err}, nil
	}
	if !counts || l.MaxExceptions <= 0 {
		return nil, nil
	}
	got, cerr := exceptions()
	if cerr != nil {
		return nil, cerr
	}
	if got >= l.MaxExceptions {
		return fmt.Errorf("%w (%d): %w", ErrMaxExceptions, got, err), nil
	}
	return nil, nil
}

// AfterTimeout says what follows attempt n that ran past its timeout
// (err says so): the job fails at once with FailOnTimeout, and is
// otherwise handled as an exception that does not count towards
// MaxExceptions.
func (l Limits) AfterTimeout(n int, now time.Time, err error) error {
	if l.FailOnTimeout {
		return err
	}
	fail, _ := l.AfterException(n, now, err, false, nil)
	return fail
}

// AfterRelease says why a release that the handler asked for on attempt
// n would only fail the job at its next start (Admit), or nil if the
// job may run again: it was its last try, or its retry-until has
// passed. runtime's worker fails such a job now, with this reason,
// rather than later as an attempt that did not finish.
func (l Limits) AfterRelease(n int, now time.Time) error {
	switch {
	case !l.RetryUntil.IsZero():
		if !now.Before(l.RetryUntil) {
			return fmt.Errorf("%w (%s): released by its handler or middleware after it", ErrRetryUntil, l.RetryUntil.UTC().Format(time.RFC3339))
		}
	case l.Tries > 0 && n >= l.Tries:
		return fmt.Errorf("%w: released by its handler or middleware on attempt %d of %d, with no tries left (a release uses an attempt: give the job more tries, or a retry_until)", ErrMaxAttempts, n, l.Tries)
	}
	return nil
}

// Backoff is the delay before the attempt after attempt n: the nth of
// delays, the last one repeating; 0 for none.
func Backoff(delays []time.Duration, n int) time.Duration {
	if len(delays) == 0 {
		return 0
	}
	return delays[min(max(n, 1), len(delays))-1]
}

// triesError is ErrMaxAttempts for a job whose last try ended in err. It
// says how many tries the job had in words: "failed on its only try",
// "failed after 3 of 3 tries".
type triesError struct {
	n, tries int
	err      error
}

func (e *triesError) Error() string {
	if e.tries == 1 {
		return fmt.Sprintf("jobgen: job failed on its only try: %v", e.err)
	}
	return fmt.Sprintf("jobgen: job failed after %d of %d tries: %v", e.n, e.tries, e.err)
}

func (e *triesError) Unwrap() []error { return []error{ErrMaxAttempts, e.err} }
