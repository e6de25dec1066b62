package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// JobProgress is how far a running job has got, as its handler last
// reported it (Progress).
type JobProgress struct {
	// Percent is from 0 to 100.
	Percent int
	// Note is the handler's note, cut to maxProgressNote bytes.
	Note string
	// At is when it was recorded (Redis clock).
	At time.Time
	// Attempt is the attempt that reported it.
	Attempt int
}

// progressEvery is the least time between two writes of one job's
// progress to Redis.
const progressEvery = time.Second

// maxProgressNote bounds a progress note, in bytes.
const maxProgressNote = 200

// jobContextKey finds the job's own context under the contexts a
// handler's middleware wrapped it in.
type jobContextKey struct{}

// Progress records how far the running job whose context ctx is has got:
// percent, from 0 to 100, and a short note (cut to 200 bytes). Operators
// see it on the job's page (Inspector.FindJob: QueuedJob.Progress, the
// dashboard, queue:job).
//
// Handlers may call it as often as they like: at most one write a second
// per job reaches Redis. The first goes at once, in the call; later ones
// within the second are coalesced, and the latest is written a second
// after the previous write, in the background. A write is fenced by the
// job's reservation token, so a worker that lost the job, or whose job
// was cancelled, writes nothing; the entry goes when the job is acked,
// fails, is cancelled or cleared.
//
// It returns an error wrapping ErrInvalid for a percent out of range or
// a ctx that is not a running job's, and the error of a write made in
// the call: a *LeaseLostError if the job is no longer this attempt's
// (cancelled, say).
func Progress(ctx context.Context, percent int, note string) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("%w: progress %d: percent must be from 0 to 100", ErrInvalid, percent)
	}
	jc, _ := ctx.Value(jobContextKey{}).(*jobContext)
	if jc == nil || jc.engine == nil || jc.ref.Token == "" {
		return fmt.Errorf("%w: progress: ctx is not a running job's (call it from a handler, with the ctx it was given)", ErrInvalid)
	}
	s := jc.progress.Load()
	if s == nil {
		jc.progress.CompareAndSwap(nil, &progressSlot{e: jc.engine, ref: jc.ref})
		s = jc.progress.Load()
	}
	return s.set(ctx, percent, cutNote(note))
}

func cutNote(note string) string {
	if len(note) <= maxProgressNote {
		return note
	}
	cut := maxProgressNote
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut]
}

// progressSlot is one job's progress: the latest value reported, and
// when it was last written.
type progressSlot struct {
	e   *Engine
	ref Ref

	mu      sync.Mutex
	percent int
	note    string
	last    time.Time   // when the last write began
	timer   *time.Timer // the coalesced write to come, if any
	closed  bool        // the job's attempt ended: no more writes
}

// set records a value and writes it now, or leaves it for the write to
// come.
func (s *progressSlot) set(ctx context.Context, percent int, note string) error {
	s.mu.Lock()
	s.percent, s.note = percent, note
	if s.closed || s.timer != nil {
		s.mu.Unlock()
		return nil
	}
	if wait := time.Until(s.last.Add(progressEvery)); wait > 0 {
		s.timer = time.AfterFunc(wait, s.flush)
		s.mu.Unlock()
		return nil
	}
	s.last = time.Now()
	s.mu.Unlock()
	return s.write(context.WithoutCancel(ctx), percent, note)
}

// flush writes the latest value, a second after the previous write.
func (s *progressSlot) flush() {
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

func (s *progressSlot) write(ctx context.Context, percent int, note string) error {
	ok, err := s.e.store.Progress(ctx, s.ref.Queue, s.ref.ID, s.ref.Token, percent, note)
	if err != nil {
		return fmt.Errorf("progress of job %s: %w", s.ref.ID, err)
	}
	if !ok {
		return &LeaseLostError{Queue: s.ref.Queue, ID: s.ref.ID}
	}
	return nil
}

// close ends the slot's writes as the attempt ends.
func (s *progressSlot) close() {
	s.mu.Lock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
}

// endProgress ends the writes of jc's progress, and says whether the job
// reported any.
func (jc *jobContext) endProgress() bool {
	s := jc.progress.Load()
	if s == nil {
		return false
	}
	s.close()
	return true
}

// parseProgress reads an entry of the progress hash.
func parseProgress(raw string) *JobProgress {
	f := strings.SplitN(raw, " ", 4)
	if len(f) < 3 {
		return nil
	}
	pct, err1 := strconv.Atoi(f[0])
	ms, err2 := strconv.ParseInt(f[1], 10, 64)
	a, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	p := &JobProgress{Percent: pct, At: time.UnixMilli(ms), Attempt: a}
	if len(f) == 4 {
		p.Note = f[3]
	}
	return p
}
