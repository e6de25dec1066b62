package examplejobs

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Entry is one thing a handler did.
type Entry struct {
	// What the handler did, such as "SendEmail a@example.com".
	What string
	// Job is the running job, from runtime.JobInfoFrom.
	Job runtime.JobInfo
	// At is when the handler ran.
	At time.Time
}

// Log collects Entries. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []Entry
}

type logKey struct{}

// WithLog returns a context whose handlers record into l.
func WithLog(ctx context.Context, l *Log) context.Context {
	return context.WithValue(ctx, logKey{}, l)
}

// Record adds what to the Log of ctx, if it has one.
func Record(ctx context.Context, what string) {
	l, ok := ctx.Value(logKey{}).(*Log)
	if !ok {
		return
	}
	info, _ := runtime.JobInfoFrom(ctx)
	l.mu.Lock()
	l.entries = append(l.entries, Entry{What: what, Job: info, At: time.Now()})
	l.mu.Unlock()
}

// Entries returns what was recorded so far, in order.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// Find returns the first entry recording what.
func (l *Log) Find(what string) (Entry, bool) {
	for _, e := range l.Entries() {
		if e.What == what {
			return e, true
		}
	}
	return Entry{}, false
}
