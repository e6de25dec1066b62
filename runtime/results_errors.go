package runtime

import (
	"context"
	"errors"
	"fmt"
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
// a job does.
type JobFailedError struct {
	Queue    string
	ID       string
	Name     string // the job's wire name
	Message  string // the failure, as the failed store keeps it
	Attempts int
}

func (e *JobFailedError) Error() string {
	return fmt.Sprintf("jobgen: job %s (%s) on queue %q failed after %d attempts: %s", e.ID, e.Name, e.Queue, e.Attempts, e.Message)
}

// Unwrap lets errors.Is(err, ErrJobFailed) match.
func (e *JobFailedError) Unwrap() error { return ErrJobFailed }
