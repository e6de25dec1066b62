package runtime

import "github.com/jobgen/jobgen/internal/errs"

// Every error jobgen returns, in one place. Match the sentinels with
// errors.Is and take the typed errors apart with errors.As; the internal
// packages return these same values. internal/errs documents each.

var (
	// ErrInvalid is wrapped by every error about bad input: a bad queue
	// name, a bad option, a bad URL.
	ErrInvalid = errs.ErrInvalid
	// ErrNoURL is returned by Open for an empty URL.
	ErrNoURL = errs.ErrNoURL
	// ErrNoDispatcher is returned by Dispatch when no dispatcher is set.
	ErrNoDispatcher = errs.ErrNoDispatcher

	// ErrPayloadTooLarge is wrapped by PayloadTooLargeError.
	ErrPayloadTooLarge = errs.ErrPayloadTooLarge
	// ErrIDTaken is returned when a pushed job ID exists already with
	// another payload; nothing is pushed. It is not ErrDuplicate.
	ErrIDTaken = errs.ErrIDTaken
	// ErrDuplicate is wrapped by DuplicateError: a unique job's key is
	// held, and nothing was pushed.
	ErrDuplicate = errs.ErrDuplicate
	// ErrNotReplicated is wrapped by the error of a push that fewer
	// replicas than ReplicationConfig.Replicas acknowledged in time.
	ErrNotReplicated = errs.ErrNotReplicated
	// ErrNoKeyRing is returned by a dispatch of an encrypted job through
	// an engine with no EngineConfig.Keys. Nothing is pushed.
	ErrNoKeyRing = errs.ErrNoKeyRing

	// ErrLeaseLost is wrapped by LeaseLostError: an ack, release, extend
	// or fail with a stale reservation token changed nothing.
	ErrLeaseLost = errs.ErrLeaseLost
	// ErrMalformedState is wrapped by MalformedStateError.
	ErrMalformedState = errs.ErrMalformedState
	// ErrDecode is wrapped by DecodeError, and by a body that does not
	// decode into its job type.
	ErrDecode = errs.ErrDecode
	// ErrDecrypt is wrapped by every failure to open an encrypted job.
	ErrDecrypt = errs.ErrDecrypt
	// ErrUnknownJob is returned for a job no handler is registered for.
	ErrUnknownJob = errs.ErrUnknownJob
	// ErrUnknownCallback is returned when a chain or batch names a
	// callback the worker's router has no registration for.
	ErrUnknownCallback = errs.ErrUnknownCallback

	// ErrTimeout is the error of an attempt that ran past its timeout.
	ErrTimeout = errs.ErrTimeout
	// ErrMaxAttempts is the failure of a job whose tries are used up.
	ErrMaxAttempts = errs.ErrMaxAttempts
	// ErrMaxExceptions is the failure of a job that reached MaxExceptions.
	ErrMaxExceptions = errs.ErrMaxExceptions
	// ErrRetryUntil is the failure of a job whose RetryUntil has passed.
	ErrRetryUntil = errs.ErrRetryUntil
	// ErrWorkerStopping cancels a handler's context when the worker's
	// grace period runs out.
	ErrWorkerStopping = errs.ErrWorkerStopping

	// ErrNoBatch is returned for a batch that is unknown or expired.
	ErrNoBatch = errs.ErrNoBatch
	// ErrBatchFinished is returned when jobs are added to a batch whose
	// jobs have all succeeded.
	ErrBatchFinished = errs.ErrBatchFinished
)

type (
	// LeaseLostError says that the reservation of a job is no longer
	// current. It unwraps to ErrLeaseLost.
	LeaseLostError = errs.LeaseLostError
	// PayloadTooLargeError is returned when an encoded job is larger than
	// the engine's payload cap. It unwraps to ErrPayloadTooLarge.
	PayloadTooLargeError = errs.PayloadTooLargeError
	// DecodeError says that a job's payload could not be decoded. It
	// unwraps to ErrDecode and the cause.
	DecodeError = errs.DecodeError
	// MalformedStateError says that a job's state entry could not be
	// read. It unwraps to ErrMalformedState.
	MalformedStateError = errs.MalformedStateError
	// PanicError is the exception of a handler that panicked.
	PanicError = errs.PanicError
	// DuplicateError is returned by the dispatch of a unique job whose key
	// is held. It unwraps to ErrDuplicate.
	DuplicateError = errs.DuplicateError
)
