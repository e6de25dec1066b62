package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/progress"
)

// JobProgress is how far a running job has got, as its handler last
// reported it (Progress).
type JobProgress struct {
	// Percent is from 0 to 100.
	Percent int
	// Note is the handler's note, cut to 200 bytes.
	Note string
	// At is when it was recorded (Redis clock).
	At time.Time
	// Attempt is the attempt that reported it.
	Attempt int
}

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
		jc.progress.CompareAndSwap(nil, progress.NewSlot(jc.writeProgress))
		s = jc.progress.Load()
	}
	return s.Set(ctx, percent, progress.CutNote(note))
}

// writeProgress writes the job's progress, fenced by its token
// (progress.Slot calls it, at most once a second).
func (jc *jobContext) writeProgress(ctx context.Context, percent int, note string) error {
	ref := jc.ref
	ok, err := jc.engine.store.Progress(ctx, ref.Queue, ref.ID, ref.Token, percent, note)
	if err != nil {
		return fmt.Errorf("progress of job %s: %w", ref.ID, err)
	}
	if !ok {
		return &LeaseLostError{Queue: ref.Queue, ID: ref.ID}
	}
	return nil
}

// endProgress ends the writes of jc's progress, and says whether the job
// reported any.
func (jc *jobContext) endProgress() bool {
	s := jc.progress.Load()
	if s == nil {
		return false
	}
	s.Close()
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
