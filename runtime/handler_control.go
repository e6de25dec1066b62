package runtime

import (
	"errors"
	"fmt"
	"time"
)

// A handler controls its job by returning one of these errors.

// ReleaseRequest returns an error that makes the worker put the job back on
// its queue, ready after delay (Laravel's $this->release($delay)). It is
// not counted as an exception; the attempt is still used.
func ReleaseRequest(delay time.Duration) error { return &releaseRequest{delay: delay} }

// DeferRequest returns an error that makes the worker put the job back on
// its queue, ready after delay, as though this attempt had not been made:
// the attempt its start counted is given back, so the job's attempts are
// the same when it next runs as they were this time, and a deferral never
// uses up its Tries (its RetryUntil still holds). It is not counted as an
// exception. Laravel has no counterpart: its release always uses the
// attempt. RateLimited(...).WithoutAttempt() returns it.
func DeferRequest(delay time.Duration) error { return &releaseRequest{delay: delay, deferral: true} }

// FailRequest returns an error that makes the worker fail the job now, with
// err as the reason, whatever tries remain (Laravel's $this->fail()).
func FailRequest(err error) error {
	if err == nil {
		err = errors.New("failed by its handler")
	}
	return &failRequest{err: err}
}

// DeleteRequest returns an error that makes the worker delete the job as done,
// without retrying it (Laravel's $this->delete()). Its chain still runs.
func DeleteRequest() error { return deleteRequest{} }

type releaseRequest struct {
	delay    time.Duration
	deferral bool // DeferRequest: the attempt is given back
	// hold, for HoldQueue, is how long the job's whole queue is held;
	// cause is the error that made the handler hold it.
	hold  time.Duration
	cause error
}

func (r *releaseRequest) Error() string {
	if r.hold > 0 {
		return fmt.Sprintf("queue held for %v: %v", r.hold, r.cause)
	}
	if r.deferral {
		return fmt.Sprintf("deferral requested (delay %v)", r.delay)
	}
	return fmt.Sprintf("release requested (delay %v)", r.delay)
}

// Unwrap returns the cause a HoldQueue request carries.
func (r *releaseRequest) Unwrap() error { return r.cause }

type failRequest struct{ err error }

func (r *failRequest) Error() string { return "failed by its handler: " + r.err.Error() }
func (r *failRequest) Unwrap() error { return r.err }

type deleteRequest struct{}

func (deleteRequest) Error() string { return "delete requested" }
