package runtime

// Every error jobgen returns, in one place: the sentinels to match with
// errors.Is and the typed errors to take apart with errors.As.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jobgen/jobgen/internal/attempt"
	"github.com/jobgen/jobgen/internal/eviction"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/internal/seal"
	"github.com/jobgen/jobgen/internal/send"
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

	// ErrIDTaken is returned when a pushed job ID exists already, with
	// another payload. It is not ErrDuplicate, which is about a unique
	// job's key.
	ErrIDTaken = errors.New("jobgen: job ID exists already")

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

// ErrTimeout is the error of an attempt that ran past its timeout.
var ErrTimeout = errors.New("jobgen: job attempt timed out")

// ErrMaxAttempts is the failure of a job whose tries are used up.
var ErrMaxAttempts = attempt.ErrMaxAttempts

// ErrMaxExceptions is the failure of a job that reached MaxExceptions.
var ErrMaxExceptions = attempt.ErrMaxExceptions

// ErrRetryUntil is the failure of a job whose RetryUntil has passed.
var ErrRetryUntil = attempt.ErrRetryUntil

// ErrWorkerStopping cancels a handler's context when the worker's grace
// period runs out; its job is released.
var ErrWorkerStopping = errors.New("jobgen: worker stopping")

// PanicError is the exception of a handler that panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("handler panicked: %v", e.Value) }

// ErrDuplicate is wrapped by *DuplicateError: a dispatch of a unique job
// found another job holding its unique key, and pushed nothing. It is
// not ErrIDTaken, which is about a job ID pushed twice.
var ErrDuplicate = errors.New("jobgen: a unique job with this key is already queued or running")

// DuplicateError is returned by the dispatch of a unique job whose key is
// held: errors.Is(err, ErrDuplicate) matches it, and ResultOf turns it
// into a DispatchResult with Duplicate set.
type DuplicateError struct {
	// Name is the job's wire name and Key its unique key.
	Name string
	Key  string
	// HolderID is the ID of the job that holds the key, or "" when the
	// lock does not name it (Laravel's unique locks hold a random owner).
	HolderID string
}

func (e *DuplicateError) Error() string {
	if e.HolderID == "" {
		return fmt.Sprintf("jobgen: job %s not dispatched: unique key %q is held by another job, which the lock does not name", e.Name, e.Key)
	}
	return fmt.Sprintf("jobgen: job %s not dispatched: unique key %q is held by job %s", e.Name, e.Key, e.HolderID)
}

// Unwrap lets errors.Is(err, ErrDuplicate) match.
func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// ErrDecrypt is wrapped by every failure to open an encrypted job: an
// unknown key ID, a payload that fails authentication (tampered, or
// sealed under another secret with the same key ID), a truncated or
// foreign payload, or no key ring on the worker's engine. The worker
// fails such a job at once, without retries.
var ErrDecrypt = seal.ErrDecrypt

// ErrNoKeyRing is returned by a dispatch of an encrypted job through an
// engine whose EngineConfig.Keys is not set. Nothing is pushed.
var ErrNoKeyRing = errors.New("jobgen: encrypted job, but the engine has no key ring (EngineConfig.Keys)")

// ErrNoBatch is returned for a batch that is unknown, or whose state has
// expired (EngineConfig.StateRetention after its last change).
var ErrNoBatch = errors.New("jobgen: no such batch (unknown, or expired)")

// ErrBatchFinished is returned when jobs are added to a batch whose jobs
// have all succeeded.
var ErrBatchFinished = errors.New("jobgen: every job of the batch has succeeded")

// ErrEvicting is returned by Open, NewEngine and Worker.Run for a Redis
// whose maxmemory-policy may evict keys under memory pressure, unless
// EngineConfig.AllowEviction accepts the risk: an evicted job, chain
// marker, batch record or unique lock is lost without a trace.
var ErrEvicting = eviction.ErrEvicting

// ErrNotReplicated is wrapped by the error of a push that fewer replicas
// than ReplicationConfig.Replicas acknowledged in time. The job reached
// the master, but a failover may lose it.
var ErrNotReplicated = send.ErrNotReplicated

// ErrUnreachable is wrapped by the error of Open when no connection to
// Redis could be made.
var ErrUnreachable = jobrdb.ErrUnreachable

// ErrTLSMismatch is wrapped by the error of Open for a rediss:// URL whose
// server speaks plain Redis, without TLS.
var ErrTLSMismatch = jobrdb.ErrTLSMismatch

// ErrNoDispatcher is returned by Dispatch when no dispatcher is set.
var ErrNoDispatcher = errors.New("jobgen: no dispatcher: call runtime.SetDefaultDispatcher(engine) at start-up, or runtime.WithDispatcher(ctx, d)")

// ErrUnknownJob is returned for a job whose name no handler is registered
// for.
var ErrUnknownJob = errors.New("jobgen: no handler registered for job")

// ErrUnknownCallback is returned when a chain or batch names a callback
// that the worker's router has no registration for.
var ErrUnknownCallback = errors.New("jobgen: no callback registered")

// FieldError says which field of a job's body is wrong, and how: a value
// of another wire type than the field's (ProblemType), a key the job's
// struct does not know (ProblemUnknown), or a field the body lacks
// (ProblemMissing). errors.Is(err, ErrDecode) matches it: the worker
// fails the job at once, into the failed store with this message.
type FieldError struct {
	// Job is the job's wire name.
	Job string
	// Field is the Go field, dotted through inlined structs; "" for an
	// unknown key.
	Field string
	// Key is the field's wire key: its msgpack tag's name, or its name.
	Key string
	// Found is the msgpack type the body holds under Key ("string",
	// "int", "map", ...); "" for a missing field.
	Found string
	// Want is the field's Go type; "" for an unknown key.
	Want string
	// Problem says what is wrong.
	Problem FieldProblem
	// Known lists the struct's wire keys, for an unknown key.
	Known []string
	// Err is msgpack's own error for a wrong type.
	Err error
}

// FieldProblem is what a FieldError is about.
type FieldProblem int

// The problems a FieldError reports.
const (
	// ProblemType: the value under the key is of another type.
	ProblemType FieldProblem = iota + 1
	// ProblemUnknown: the struct has no field with the key.
	ProblemUnknown
	// ProblemMissing: the body lacks a field the struct requires.
	ProblemMissing
)

func (e *FieldError) Error() string {
	switch e.Problem {
	case ProblemUnknown:
		return fmt.Sprintf("jobgen: job %s: its body has key %q (a %s), which its struct has no field for (its keys: %s): was a field renamed or removed under queued jobs? Keep the old key with a msgpack tag, declare a version with an upgrade, or set decode=lenient (docs/changing-jobs.md)",
			e.Job, e.Key, e.Found, strings.Join(e.Known, ", "))
	case ProblemMissing:
		return fmt.Sprintf("jobgen: job %s: field %s (wire key %q, %s) is missing from its body: the job was queued by a struct without it; tag the field omitempty, or let the generator record it as added (go generate), or set decode=lenient (docs/changing-jobs.md)",
			e.Job, e.Field, e.Key, e.Want)
	}
	return fmt.Sprintf("jobgen: job %s: field %s (wire key %q): the body holds a msgpack %s, want %s", e.Job, e.Field, e.Key, e.Found, e.Want)
}

// Unwrap lets errors.Is(err, ErrDecode) match.
func (e *FieldError) Unwrap() error { return ErrDecode }

// ErrNewerVersion is the error of a job whose schema version is newer
// than any its worker knows. A worker does not return it from a handler:
// it gives such a job back, its attempt unused, for a newer worker
// (docs/changing-jobs.md). DispatchSync, which has nobody to give it to,
// returns it.
var ErrNewerVersion = errors.New("jobgen: job's schema version is newer than this worker knows")
