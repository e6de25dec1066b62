package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Job is a dispatchable job. Generated code implements it for every
// `//job:` struct; hand-written types may too.
type Job interface {
	// JobName is the job's stable wire name, which the router maps to a
	// decoder and a handler.
	JobName() string
	// JobOptions are the job's defaults from its annotation.
	JobOptions() JobOptions
	// EncodeJob encodes the job's fields.
	EncodeJob() ([]byte, error)
}

// JobOptions are a job type's defaults, set by its `//job:` annotation. A
// zero field means the worker's default.
type JobOptions struct {
	// Queue to push to; "" means "default".
	Queue string
	// Connection names the dispatcher to use; "" means the default one.
	Connection string
	// Tries is the number of attempts allowed.
	Tries int
	// Backoff lists the delays between attempts; the last one repeats.
	Backoff []time.Duration
	// Timeout limits one attempt.
	Timeout time.Duration
	// RetryUntil stops retries this long after dispatch.
	RetryUntil time.Duration
	// MaxExceptions fails the job after this many exceptions.
	MaxExceptions int
	// FailOnTimeout fails the job at its first timeout.
	FailOnTimeout bool
	// Delay postpones every dispatch of the job.
	Delay time.Duration
	// UniqueFor keeps a second copy from being queued for this long while
	// one is pending.
	UniqueFor time.Duration
	// Debounce runs only the last of a burst of dispatches with the same
	// debounce key, once this long has passed since it (debounce.go).
	Debounce time.Duration
	// DebounceMaxWait caps how long a debounced job waits from the first
	// dispatch of its burst; 0 means 10 times Debounce.
	DebounceMaxWait time.Duration
	// Encrypted encrypts the job's body at rest.
	Encrypted bool
	// Tags label the job for monitoring.
	Tags []string
	// GroupLimit is the most jobs of one group (see GroupedJob) that run
	// at once, across all workers; 0 means no limit.
	GroupLimit int
	// Needs are the wire names of the jobs whose results the job is
	// handed as a step of a workflow, in order; a name starting with "[]"
	// is a list of such steps (a fan-in). A job that needs results runs
	// only as a step of a workflow (workflow.go).
	Needs []string
}

// DefaultQueue is the queue of jobs that name none.
const DefaultQueue = "default"

// Encode encodes a job's fields with msgpack. Generated EncodeJob methods
// call it.
func Encode[T any](job T) ([]byte, error) {
	b, err := msgpack.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", job, err)
	}
	return b, nil
}

// Decode decodes a job's fields encoded by Encode.
func Decode[T any](b []byte) (T, error) {
	return decodePooled[T](b)
}

// Handler runs a job; Handle methods of job types have this shape.
type Handler interface {
	Handle(ctx context.Context) error
}
