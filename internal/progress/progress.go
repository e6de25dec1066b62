package progress

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"
)

// Every is the least time between two writes of one job's progress.
const Every = time.Second

// MaxNote bounds a progress note, in bytes.
const MaxNote = 200

// CutNote cuts note to at most MaxNote bytes, at the start of a rune.
func CutNote(note string) string {
	if len(note) <= MaxNote {
		return note
	}
	cut := MaxNote
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut]
}

// Slot is one job's progress: the latest value reported, and when it
// was last written. It is safe for concurrent use.
type Slot struct {
	write func(ctx context.Context, percent int, note string) error

	mu      sync.Mutex
	percent int
	note    string
	last    time.Time   // when the last write began
	timer   *time.Timer // the coalesced write to come, if any
	closed  bool        // the job's attempt ended: no more writes
}

// NewSlot returns the slot of a job whose progress write writes.
func NewSlot(write func(ctx context.Context, percent int, note string) error) *Slot {
	return &Slot{write: write}
}

// Set records a value and writes it now, returning the write's error,
// or leaves it for the write to come, a second after the previous one
// (its error is dropped: a job whose write fails shows its previous
// progress).
func (s *Slot) Set(ctx context.Context, percent int, note string) error {
	s.mu.Lock()
	s.percent, s.note = percent, note
	if s.closed || s.timer != nil {
		s.mu.Unlock()
		return nil
	}
	if wait := time.Until(s.last.Add(Every)); wait > 0 {
		s.timer = time.AfterFunc(wait, s.flush)
		s.mu.Unlock()
		return nil
	}
	s.last = time.Now()
	s.mu.Unlock()
	return s.write(context.WithoutCancel(ctx), percent, note)
}

// flush writes the latest value, a second after the previous write.
func (s *Slot) flush() {
	s.mu.Lock()
	s.timer = nil
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.last = time.Now()
	percent, note := s.percent, s.note
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.write(ctx, percent, note) // a job whose write fails shows its previous progress
}

// Close ends the slot's writes as the attempt ends; a write already
// begun still ends.
func (s *Slot) Close() {
	s.mu.Lock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
}
