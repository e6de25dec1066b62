package notes

import (
	"strings"
	"sync"
	"time"
)

// The notes' text. Fields are separated by newlines, which no queue name
// holds; a job ID is the rest of the note.
const (
	cancelText = "cancel"  // "cancel\n<queue>\n<job ID>": a running job was cancelled
	Restart    = "restart" // a restart broadcast (Inspector.RestartWorkers)
)

// CancelText is the note that tells workers that the job id of queue,
// which one of them may be running, was cancelled.
func CancelText(queue, id string) string {
	return cancelText + "\n" + queue + "\n" + id
}

// Idle is how long a subscription may be silent before it is pinged; a
// second silence as long ends it, and it is made again.
const Idle = 15 * time.Second

// Recheck is when a cancel note that named no job the worker holds is
// looked at again, once: the reply of the reserve that took the job may
// have been on its way when the note came.
const Recheck = 200 * time.Millisecond

// Max bounds the cancels a box holds; past it the worker catches up
// with a heartbeat instead. A worker holds no more than Max cancels to
// look at again either.
const Max = 1000

// Job is the queue and ID of a cancelled job, as a cancel note names it:
// no reservation's token.
type Job struct {
	Queue string
	ID    string
}

// Note is one note for a worker.
type Note struct {
	Cancel  Job  // Queue and ID of a cancelled job
	Restart bool // read the restart mark
	CatchUp bool // run a heartbeat and read the restart mark
}

// parse reads the text of a note; ok is false for a note of a later
// version, or not ours.
func parse(text string) (n Note, ok bool) {
	switch {
	case text == Restart:
		return Note{Restart: true}, true
	case strings.HasPrefix(text, cancelText+"\n"):
		q, id, ok := strings.Cut(text[len(cancelText)+1:], "\n")
		if !ok {
			return Note{}, false
		}
		return Note{Cancel: Job{Queue: q, ID: id}}, true
	}
	return Note{}, false
}

// Box holds the notes a worker has not acted on yet. It is safe for
// concurrent use.
type Box struct {
	mu      sync.Mutex
	cancels []Job
	restart bool
	catchUp bool
	ready   chan struct{} // holds a token while the box is not empty
}

// NewBox returns an empty box.
func NewBox() *Box { return &Box{ready: make(chan struct{}, 1)} }

// Ready has a value to receive while the box is not empty: a worker
// waits on it, then calls Take.
func (b *Box) Ready() <-chan struct{} { return b.ready }

// Put adds n to the box. A cancel past Max turns into a catch-up.
func (b *Box) Put(n Note) {
	b.mu.Lock()
	switch {
	case n.CatchUp || len(b.cancels) >= Max:
		b.catchUp = true
	case n.Restart:
		b.restart = true
	default:
		b.cancels = append(b.cancels, n.Cancel)
	}
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// Take empties the box and returns what it held.
func (b *Box) Take() (cancels []Job, restart, catchUp bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cancels, restart, catchUp = b.cancels, b.restart, b.catchUp
	b.cancels, b.restart, b.catchUp = nil, false, false
	return cancels, restart, catchUp
}
