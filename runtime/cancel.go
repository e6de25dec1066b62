package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobgen/jobgen/internal/notes"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Cancelling a job (asynq's CancelProcessing, River's JobCancel): an
// operator's call, fenced by the attempt the operator saw, like every
// other settle. A waiting or delayed job leaves its queue at once; a
// running job leaves it at once too, and a note on the notes channel
// (worker_notify.go) has its worker end the job's context at once; a
// worker that missed the note does at its next heartbeat (extend.lua
// finds the job gone and in the failed store). Either way the job goes to the failed store, marked
// cancelled, and is not tried again; what follows a failure (its batch
// counts it as failed, its chain's catch runs and the chain goes no
// further, its failed hook runs, its unique lock is released) is run by
// a worker's sweep of the queue's hooks (hooks.go), which takes the
// cancel's entry at once.

// ErrCancelled is the cause of a cancelled job's context (context.Cause)
// and the error its failed hook gets; the failed store's entry of the
// job says it (FailedJob.Cancelled).
var ErrCancelled = errors.New("jobgen: job cancelled")

// CancelledError is the cause of the context of a running job that was
// cancelled (context.Cause); errors.Is(err, ErrCancelled) matches it.
type CancelledError struct {
	Queue string
	ID    string
}

func (e *CancelledError) Error() string {
	return fmt.Sprintf("jobgen: job %s on queue %q: cancelled while running", e.ID, e.Queue)
}

// Unwrap lets errors.Is(err, ErrCancelled) match.
func (e *CancelledError) Unwrap() error { return ErrCancelled }

// ErrNoJob is returned by Inspector.Cancel when the queue holds no such
// job: it finished (and was deleted), was cleared, or never was there.
var ErrNoJob = errors.New("jobgen: no such job in the queue (finished, cleared, or never there)")

// ErrJobFailed is returned by Inspector.Cancel for a job that is in the
// failed store already (failed, or cancelled before).
var ErrJobFailed = errors.New("jobgen: the job is in the failed store already")

// ErrStaleCancel is wrapped by StaleCancelError.
var ErrStaleCancel = errors.New("jobgen: cancel of an attempt that is no longer the job's current one")

// StaleCancelError is returned by Inspector.Cancel when the job is at
// another attempt than the one the cancel named: it was reserved again
// since (or released and reserved again). Nothing changed; look again
// and cancel the attempt now seen if that is still wanted.
type StaleCancelError struct {
	Queue string
	ID    string
	Seen  int // the attempt count the cancel named
	Now   int // the job's attempt count as found
}

func (e *StaleCancelError) Error() string {
	return fmt.Sprintf("jobgen: job %s on queue %q: cancel of attempt %d, but the job is at attempt %d now; nothing changed", e.ID, e.Queue, e.Seen, e.Now)
}

// Unwrap lets errors.Is(err, ErrStaleCancel) match.
func (e *StaleCancelError) Unwrap() error { return ErrStaleCancel }

// Cancelled is what Inspector.Cancel did.
type Cancelled struct {
	// Was is the state the job was cancelled in: StateReady or
	// StateDelayed (it left its queue), or StateReserved (it was running,
	// or held by a worker about to run it: its worker cancels its context
	// when told, or at its next heartbeat, within a third of RetryAfter).
	Was JobState
	// Attempts is the job's attempt count when it was cancelled.
	Attempts int
	// Told is set for a running job when the note of its cancel reached
	// at least one worker process: its worker ends the job's context at
	// once. Unset, the note was not sent (Redis refused it) or no worker
	// listens (workers of a version without notes), and the job's worker
	// ends it at its next heartbeat.
	Told bool
}

// Cancel cancels job id of queue if it is still at attempt seen (its
// attempt count as the caller saw it, QueuedJob.Attempts: 0 for a job
// never reserved). The job leaves its queue and goes to the failed
// store, marked cancelled (FailedJob.Cancelled), and is never tried
// again unless retried from there. A running job's context is cancelled
// with cause ErrCancelled by its worker, at once when a note on the
// engine's notes channel reaches it (Cancelled.Told), else at its next
// heartbeat; what the handler then returns is discarded (its ack,
// release or fail is refused).
//
// The cancel and the job's own settle are compare-and-set on the same
// state: whichever comes first wins, and the other changes nothing, so a
// cancel that races the job's success leaves one outcome. Cancel returns
// ErrNoJob if the job is gone (it finished, say), ErrJobFailed if it is
// in the failed store, and a *StaleCancelError if it is at another
// attempt than seen.
func (i *Inspector) Cancel(ctx context.Context, queue, id string, seen int) (Cancelled, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return Cancelled{}, err
	}
	if id == "" {
		return Cancelled{}, fmt.Errorf("%w: cancel: empty job ID", ErrInvalid)
	}
	if seen < 0 {
		return Cancelled{}, fmt.Errorf("%w: cancel job %s: attempt seen (%d) must be >= 0", ErrInvalid, id, seen)
	}
	var out Cancelled
	var found error = ErrNoJob
	if ok, err := e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		c, err := pe.inspector().Cancel(ctx, name, id, seen)
		if errors.Is(err, ErrNoJob) {
			return false, nil
		}
		out, found = c, err
		return true, nil
	}); ok {
		if err != nil {
			return Cancelled{}, err
		}
		return out, found
	}
	return e.cancel(ctx, queue, id, seen)
}

func (e *Engine) cancel(ctx context.Context, queue, id string, seen int) (Cancelled, error) {
	token := "c" + newToken()
	maxCount, maxAge := e.failedBounds()
	c, err := e.store.Cancel(ctx, jobrdb.Cancel{Queue: queue, ID: id, Seen: seen, Token: token,
		Info:     jobrdb.FailedInfo{Error: ErrCancelled.Error(), Attempts: seen, Token: token, Cancelled: true},
		MaxCount: maxCount, MaxAge: maxAge})
	if err != nil {
		return Cancelled{}, fmt.Errorf("cancel job %s of %q: %w", id, queue, err)
	}
	e.logTrimmed(queue, c.Trimmed)
	if c.Found > 0 {
		e.moveFailedLogged(ctx, queue)
	}
	switch c.Found {
	case jobrdb.CancelledReady:
		return Cancelled{Was: StateReady, Attempts: c.Attempts}, nil
	case jobrdb.CancelledReserved:
		// The cancel is done; the note only tells the worker now what its
		// heartbeat would find (worker_notify.go).
		n, err := e.store.Publish(ctx, e.keys.Notes(), notes.CancelText(queue, id))
		return Cancelled{Was: StateReserved, Attempts: c.Attempts, Told: err == nil && n > 0}, nil
	case jobrdb.CancelledDelayed:
		return Cancelled{Was: StateDelayed, Attempts: c.Attempts}, nil
	case jobrdb.CancelFailed:
		return Cancelled{}, fmt.Errorf("cancel job %s of %q: %w", id, queue, ErrJobFailed)
	case jobrdb.CancelStale:
		return Cancelled{}, &StaleCancelError{Queue: queue, ID: id, Seen: seen, Now: c.Attempts}
	default:
		return Cancelled{}, fmt.Errorf("cancel job %s of %q: %w", id, queue, ErrNoJob)
	}
}
