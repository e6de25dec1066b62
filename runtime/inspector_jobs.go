package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Reading the jobs a queue holds, for monitoring (the dashboard). These
// calls only read, a page at a time; none changes a job.

// JobState is where a job is.
type JobState string

// The states a job can be found in.
const (
	StateReady    JobState = "ready"
	StateDelayed  JobState = "delayed"
	StateReserved JobState = "reserved"
	StateFailed   JobState = "failed"
)

// QueuedJob is a job found in a queue.
type QueuedJob struct {
	Queue string
	ID    string
	State JobState
	// Attempts counts the job's reservations so far; Exceptions the
	// attempts that ended in an exception.
	Attempts   int
	Exceptions int
	// Payload is the envelope as stored; decode it with
	// DecodeEnvelope(Queue, ID, Payload). Nil if the job went while it
	// was read.
	Payload []byte
	// Due is when a delayed job becomes ready; for a reserved job, when
	// its lease runs out. Zero for a ready job.
	Due time.Time
	// Errors are the errors of the job's last attempts that ended in one
	// and were retried, oldest first (at most 10). Only FindJob reads
	// them; for a failed job, FailedStore.Get tells more.
	Errors []AttemptError
	// Progress is how far a running job has got, as its handler last
	// reported it (runtime.Progress); nil if it reported none. Only
	// FindJob reads it.
	Progress *JobProgress
}

// ListJobs returns a page of the jobs of queue in state (ready, delayed
// or reserved), from offset, at most limit, and how many the state holds:
// ready jobs in the order they will be taken, delayed ones by due time,
// reserved ones by lease deadline. A job that finishes while the page is
// read comes without its payload. A partitioned queue is read one
// partition after another.
func (i *Inspector) ListJobs(ctx context.Context, queue string, state JobState, offset, limit int) ([]QueuedJob, int64, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, 0, err
	}
	if offset < 0 || limit < 1 {
		return nil, 0, fmt.Errorf("%w: list jobs: offset (%d) must be >= 0 and limit (%d) >= 1", ErrInvalid, offset, limit)
	}
	if out, total, ok, err := pageOfPartitions(e, queue, offset, limit, func(pi *Inspector, name string, offset int) ([]QueuedJob, int64, error) {
		return pi.ListJobs(ctx, name, state, offset, limit)
	}); ok {
		if err != nil {
			return nil, 0, err
		}
		return out, total, nil
	}
	qk := e.keys.Queue(queue)
	start, stop := int64(offset), int64(offset+limit-1)
	var total int64
	var ids []string
	var scores []float64
	var err error
	switch state {
	case StateReady:
		total, ids, err = e.store.ListPage(ctx, qk.Ready, start, stop)
	case StateDelayed, StateReserved:
		k := qk.Delayed
		if state == StateReserved {
			k = qk.Reserved
		}
		total, ids, scores, err = e.store.SetPage(ctx, k, start, stop)
	default:
		return nil, 0, fmt.Errorf("%w: list jobs: state %q (want ready, delayed or reserved)", ErrInvalid, state)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list %s jobs of %q: %w", state, queue, err)
	}
	jobs, err := e.loadJobs(ctx, queue, state, ids, scores)
	return jobs, total, err
}

// loadJobs reads the payloads and attempt counts of ids, in one round
// trip.
func (e *Engine) loadJobs(ctx context.Context, queue string, state JobState, ids []string, scores []float64) ([]QueuedJob, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	qk := e.keys.Queue(queue)
	got, err := e.store.HashFields(ctx, ids, qk.Payloads, qk.State)
	if err != nil {
		return nil, fmt.Errorf("load jobs of %q: %w", queue, err)
	}
	payloads, states := got[0], got[1]
	out := make([]QueuedJob, len(ids))
	for i, id := range ids {
		j := QueuedJob{Queue: queue, ID: id, State: state}
		if p := payloads[i]; p.Found {
			j.Payload = []byte(p.Value)
		}
		if s := states[i]; s.Found {
			j.Attempts, j.Exceptions = parseJobState(s.Value)
		}
		if scores != nil {
			j.Due = time.UnixMilli(int64(scores[i]))
		}
		out[i] = j
	}
	return out, nil
}

// parseJobState reads "attempts:exceptions:token" (internal/keyspace).
func parseJobState(s string) (attempts, exceptions int) {
	parts := strings.SplitN(s, ":", 3)
	attempts, _ = strconv.Atoi(parts[0])
	if len(parts) > 1 {
		exceptions, _ = strconv.Atoi(parts[1])
	}
	return attempts, exceptions
}

// FindJob looks for job id in queue: ready, delayed, reserved or failed.
// ok is false if the queue holds no such job: it finished (and was
// deleted), was cleared, or never was there. A partitioned queue is
// searched partition by partition.
func (i *Inspector) FindJob(ctx context.Context, queue, id string) (job QueuedJob, ok bool, err error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return QueuedJob{}, false, err
	}
	if partitioned, err2 := e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		job, ok, err = pe.inspector().FindJob(ctx, name, id)
		return ok, err
	}); partitioned {
		return job, ok, err2
	}
	r, err := e.store.FindJob(ctx, e.keys.Queue(queue), id)
	if err != nil {
		return QueuedJob{}, false, fmt.Errorf("find job %s in %q: %w", id, queue, err)
	}
	j := QueuedJob{Queue: queue, ID: id}
	switch {
	case r.Payload.Found:
		j.Payload = []byte(r.Payload.Value)
		j.Attempts, j.Exceptions = parseJobState(r.State.Value)
		j.Errors = parseAttemptErrors(r.Errors.Value)
		if r.Progress.Found {
			j.Progress = parseProgress(r.Progress.Value)
		}
		switch {
		case r.Reserved.Found:
			j.State, j.Due = StateReserved, time.UnixMilli(int64(r.Reserved.Value))
		case r.Delayed.Found:
			j.State, j.Due = StateDelayed, time.UnixMilli(int64(r.Delayed.Value))
		default:
			j.State = StateReady
		}
	case r.Failed.Found:
		j.State, j.Payload = StateFailed, []byte(r.FailedPayload.Value)
		j.Errors = parseAttemptErrors(r.FailedErrors.Value)
	default:
		return e.findMovedFailed(ctx, queue, id) // failed_backend.go
	}
	return j, true, nil
}

// oldestOfPartitions answers, for a partitioned queue, with the oldest
// of its partitions' answers to of; partitioned is false for a queue of
// one partition, which the caller answers itself.
func (e *Engine) oldestOfPartitions(queue string, of func(pi *Inspector, name string) (time.Time, bool, error)) (at time.Time, ok, partitioned bool, err error) {
	partitioned, err = e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		t, found, err := of(pe.inspector(), name)
		if found && (!ok || t.Before(at)) {
			at, ok = t, true
		}
		return false, err
	})
	return at, ok, partitioned, err
}

// OldestReady returns when the job at the head of queue's ready list,
// the next to be taken, was dispatched (by its ID, or its envelope for an
// ID that does not tell); ok is false if none is ready. How long ago that
// was is how long the queue keeps jobs waiting. A partitioned queue
// answers with the oldest of its partitions' heads.
func (i *Inspector) OldestReady(ctx context.Context, queue string) (at time.Time, ok bool, err error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return time.Time{}, false, err
	}
	if at, ok, partitioned, err := e.oldestOfPartitions(queue, func(pi *Inspector, name string) (time.Time, bool, error) {
		return pi.OldestReady(ctx, name)
	}); partitioned {
		return at, ok, err
	}
	qk := e.keys.Queue(queue)
	id, found, err := e.store.First(ctx, qk.Ready)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("oldest ready job of %q: %w", queue, err)
	}
	if !found {
		return time.Time{}, false, nil
	}
	if ms, ok := idTime(id); ok {
		return time.UnixMilli(ms), true, nil
	}
	b, found, err := e.store.HashField(ctx, qk.Payloads, id)
	if err != nil || !found {
		return time.Time{}, false, nil // taken meanwhile
	}
	env, err := DecodeEnvelope(queue, id, []byte(b))
	if err != nil || env.DispatchedAt == 0 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(env.DispatchedAt), true, nil
}
