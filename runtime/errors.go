package runtime

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalid is wrapped by every error about bad input: a bad queue
	// name, a bad option, a bad URL.
	ErrInvalid = errors.New("jobgen: invalid input")

	// ErrLeaseLost is wrapped by LeaseLostError. A call that acks,
	// releases, extends or fails a job with a stale reservation token
	// changes nothing and returns it.
	ErrLeaseLost = errors.New("jobgen: reservation lease lost")

	// ErrPayloadTooLarge is wrapped by PayloadTooLargeError.
	ErrPayloadTooLarge = errors.New("jobgen: payload too large")

	// ErrDecode is wrapped by DecodeError.
	ErrDecode = errors.New("jobgen: cannot decode job")

	// ErrDuplicateID is returned when a pushed job ID exists already.
	ErrDuplicateID = errors.New("jobgen: job ID exists already")

	// ErrNoURL is returned by Open for an empty URL.
	ErrNoURL = errors.New("jobgen: no Redis URL")

	// ErrMalformedState is wrapped by MalformedStateError.
	ErrMalformedState = errors.New("jobgen: malformed job state")
)

// LeaseLostError says that the reservation of job ID under Token is no
// longer current: its lease expired and the job was moved back to ready
// or handed to another worker, or the job is gone.
type LeaseLostError struct {
	Queue string
	ID    string
}

func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("jobgen: job %s on queue %q: reservation lease lost (expired, or the job was reserved again or removed)", e.ID, e.Queue)
}

// Unwrap lets errors.Is(err, ErrLeaseLost) match.
func (e *LeaseLostError) Unwrap() error { return ErrLeaseLost }

// PayloadTooLargeError is returned when an encoded job is larger than the
// engine's payload cap. Nothing is pushed.
type PayloadTooLargeError struct {
	Name string
	Size int
	Cap  int
}

func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("jobgen: job %s encodes to %d bytes, over the payload cap of %d bytes (EngineConfig.MaxPayload)", e.Name, e.Size, e.Cap)
}

// Unwrap lets errors.Is(err, ErrPayloadTooLarge) match.
func (e *PayloadTooLargeError) Unwrap() error { return ErrPayloadTooLarge }

// DecodeError says that the payload of job ID could not be decoded: it is
// truncated, foreign, or of an unknown version.
type DecodeError struct {
	ID  string
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("jobgen: cannot decode job %s: %v", e.ID, e.Err)
}

// Unwrap returns ErrDecode and the cause.
func (e *DecodeError) Unwrap() []error { return []error{ErrDecode, e.Err} }

// MalformedStateError says that the state entry Redis kept for job ID
// ("attempts:exceptions:token") could not be read when the job was
// reserved, so its attempt and exception counts are lost. Reserve hands
// such a job out with this as its Reservation.Err, for its worker to
// fail it; the other jobs of the reserve are not held up.
type MalformedStateError struct {
	Queue string
	ID    string
	// Entry is the entry as it was found, or "" if not known: a retry of
	// the reserve by the Redis client, after the reply that held it was
	// lost, hands the job back without it.
	Entry string
}

func (e *MalformedStateError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("jobgen: job %s on queue %q: state entry is malformed; its attempt counts are lost", e.ID, e.Queue)
	}
	return fmt.Sprintf("jobgen: job %s on queue %q: state entry %q is malformed (want \"attempts:exceptions:token\"); its attempt counts are lost", e.ID, e.Queue, e.Entry)
}

// Unwrap lets errors.Is(err, ErrMalformedState) match.
func (e *MalformedStateError) Unwrap() error { return ErrMalformedState }
