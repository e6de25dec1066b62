package runtime

import (
	"sync"
	"time"
)

// EventKind says what happened; the names are Laravel's queue events.
type EventKind int

// The events, in the order a job meets them.
const (
	// JobQueued: a job was pushed (fired by the Engine).
	JobQueued EventKind = iota + 1
	// JobProcessing: a handler is about to run.
	JobProcessing
	// JobProcessed: a handler returned without error (or deleted its job).
	JobProcessed
	// JobExceptionOccurred: a handler returned an error or panicked.
	JobExceptionOccurred
	// JobReleased: the job went back to its queue, now or after Delay.
	JobReleased
	// JobFailed: the job went to the failed store.
	JobFailed
	// JobTimedOut: an attempt ran past its timeout.
	JobTimedOut
	// Looping: the worker is about to look for jobs.
	Looping
	// WorkerStopping: the worker is stopping; Reason says why.
	WorkerStopping
	// JobCancelled: a running job was cancelled (Inspector.Cancel); its
	// worker cancelled its context and discarded what its handler
	// returned. Err is a *CancelledError. A job cancelled while it waited
	// has no worker to tell.
	JobCancelled
)

var eventNames = map[EventKind]string{
	JobQueued: "JobQueued", JobProcessing: "JobProcessing", JobProcessed: "JobProcessed",
	JobExceptionOccurred: "JobExceptionOccurred", JobReleased: "JobReleased", JobFailed: "JobFailed",
	JobTimedOut: "JobTimedOut", Looping: "Looping", WorkerStopping: "WorkerStopping",
	JobCancelled: "JobCancelled",
}

func (k EventKind) String() string {
	if n, ok := eventNames[k]; ok {
		return n
	}
	return "EventKind(?)"
}

// Event is one thing that happened to a job or a worker.
type Event struct {
	Kind   EventKind
	Worker string // the worker's Name; "" for JobQueued
	Queue  string
	Name   string // the job's wire name
	ID     string
	// Attempt is the attempt the event belongs to (1 for the first).
	Attempt int
	// Duration is how long the handler ran, for events after it ran.
	Duration time.Duration
	// Delay is the delay of a release or of a queued job.
	Delay time.Duration
	// Err is the handler's error, or why the job failed.
	Err error
	// Reason says why a worker stops, for WorkerStopping.
	Reason string
	// ResultSize is the size of the job's encoded result (RecordResult),
	// for JobProcessed; 0 for none.
	ResultSize int
}

// listeners holds event subscribers. Subscribers are called synchronously
// from the goroutine where the event happens, so they must be quick and
// safe for concurrent use.
type listeners struct {
	mu  sync.RWMutex
	fns []func(Event)
}

func (l *listeners) add(fn func(Event)) {
	l.mu.Lock()
	l.fns = append(l.fns, fn)
	l.mu.Unlock()
}

func (l *listeners) emit(e Event) {
	l.mu.RLock()
	fns := l.fns
	l.mu.RUnlock()
	for _, fn := range fns {
		fn(e)
	}
}

func (l *listeners) empty() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.fns) == 0
}
