package runtime

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var (
	// ErrResultTooLarge is wrapped by ResultTooLargeError.
	ErrResultTooLarge = errors.New("jobgen: result too large")
	// ErrAwaitTimeout is wrapped by AwaitTimeoutError.
	ErrAwaitTimeout = errors.New("jobgen: timed out waiting for a job's result")
)

// ResultTooLargeError is what RecordResult returns for a result whose
// encoding is over EngineConfig.MaxResultSize. The result is refused:
// nothing of it is stored. A handler registered with RegisterResult
// that returns such a result fails its job at once (no retry would make
// it smaller), with this error as the failure.
type ResultTooLargeError struct {
	Size  int // the encoded result, in bytes
	Limit int // EngineConfig.MaxResultSize
}

func (e *ResultTooLargeError) Error() string {
	return fmt.Sprintf("jobgen: result of %d bytes is over the limit of %d bytes (EngineConfig.MaxResultSize)", e.Size, e.Limit)
}

// Unwrap lets errors.Is(err, ErrResultTooLarge) match.
func (e *ResultTooLargeError) Unwrap() error { return ErrResultTooLarge }

// AwaitTimeoutError is what Await returns when its context's deadline
// passes before the job finished. It matches ErrAwaitTimeout and
// context.DeadlineExceeded. The job may still finish: read its result
// later with ReadResult.
type AwaitTimeoutError struct {
	Queue  string
	ID     string
	Waited time.Duration
}

func (e *AwaitTimeoutError) Error() string {
	return fmt.Sprintf("jobgen: job %s on queue %q has no result after %v", e.ID, e.Queue, e.Waited.Round(time.Millisecond))
}

// Is lets errors.Is match ErrAwaitTimeout and context.DeadlineExceeded.
func (e *AwaitTimeoutError) Is(target error) bool {
	return target == ErrAwaitTimeout || target == context.DeadlineExceeded
}

// JobFailedError is what Await and ReadResult return for a job that is
// in the failed store: it failed for good (or was cancelled), and has no
// result. It matches ErrJobFailed, as Inspector.Cancel's error for such
// a job does, and, through Cause, the error the job failed with where
// jobgen knows it: a job that failed because its result was over
// EngineConfig.MaxResultSize matches ErrResultTooLarge, and errors.As
// finds its *ResultTooLargeError.
type JobFailedError struct {
	Queue    string
	ID       string
	Name     string // the job's wire name
	Message  string // the failure, as the failed store keeps it
	Attempts int
	// Cause is the failure as an error, where jobgen recognises it in
	// Message (a *ResultTooLargeError); nil otherwise.
	Cause error
}

// Is lets errors.Is match the error of Cause.
func (e *JobFailedError) Is(target error) bool {
	return e.Cause != nil && errors.Is(e.Cause, target)
}

// As lets errors.As find the error of Cause.
func (e *JobFailedError) As(target any) bool {
	return e.Cause != nil && errors.As(e.Cause, target)
}

// tooLargeText finds a *ResultTooLargeError's message in a failure.
var tooLargeText = regexp.MustCompile(`jobgen: result of (\d+) bytes is over the limit of (\d+) bytes \(EngineConfig\.MaxResultSize\)`)

// failureCause returns the error a failure's message was made from,
// where jobgen made it: a *ResultTooLargeError; or nil.
func failureCause(msg string) error {
	m := tooLargeText.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	size, err1 := strconv.Atoi(m[1])
	limit, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return nil
	}
	return &ResultTooLargeError{Size: size, Limit: limit}
}

// UnknownJobError is what Await returns for a job ID
// that the queue does not hold, that has no result and that is not in
// the failed store: it was never dispatched to this queue, or it is
// gone (a job of a type that records no result leaves nothing once it
// is done, and a result expires after EngineConfig.ResultRetention).
// Await returns it at once rather than wait for a job that will not
// come. It matches ErrNoJob.
type UnknownJobError struct {
	Queue string
	ID    string
}

func (e *UnknownJobError) Error() string {
	return fmt.Sprintf("jobgen: job %s on queue %q: the queue holds no such job, and it has no result and no failure: "+
		"check the ID and the queue (AwaitOn for a job sent to another queue); a job whose type records no result leaves nothing once done, "+
		"a result expires after EngineConfig.ResultRetention, and a job dispatched through the outbox (DispatchTx) is there once the relay has pushed it", e.ID, e.Queue)
}

// Unwrap lets errors.Is(err, ErrNoJob) match.
func (e *UnknownJobError) Unwrap() error { return ErrNoJob }

func (e *JobFailedError) Error() string {
	return fmt.Sprintf("jobgen: job %s (%s) on queue %q failed after %d attempts: %s", e.ID, e.Name, e.Queue, e.Attempts, e.Message)
}

// Unwrap lets errors.Is(err, ErrJobFailed) match.
func (e *JobFailedError) Unwrap() error { return ErrJobFailed }
