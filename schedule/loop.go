package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// loopEntry is one periodic job as the runner sees it.
type loopEntry struct {
	// Name is the entry's identity: a tick is the pair (Name, instant).
	Name string
	// spec says when it runs.
	spec spec
	// Missed is how many ticks a runner tries at each pass, the latest
	// one (at or before now) included, so it bounds how many missed ticks
	// run when runners come back after all were down: 1 runs the last
	// missed tick only. 0 tries the latest tick only while it is on time
	// (loopConfig.Grace), so missed ticks never run.
	Missed int
}

// Due returns the ticks of e to try at now, oldest first: see
// loopEntry.Missed.
func (e loopEntry) Due(now time.Time, grace time.Duration) []time.Time {
	last := e.spec.Prev(now)
	if last.IsZero() {
		return nil
	}
	if e.Missed <= 0 {
		if now.Sub(last) < grace {
			return []time.Time{last}
		}
		return nil
	}
	out := make([]time.Time, e.Missed)
	n := 0
	for t := last; !t.IsZero() && n < e.Missed; t = e.spec.Prev(t.Add(-time.Nanosecond)) {
		n++
		out[e.Missed-n] = t
	}
	return out[e.Missed-n:]
}

// outcome is what a Fire call did with one tick.
type outcome int

const (
	// outFired: this call claimed the tick and pushed its job.
	outFired outcome = iota
	// outTaken: the tick, or a later one, was claimed already, by this
	// runner or another.
	outTaken
	// outOverlapping: this call claimed the tick but pushed nothing, as the
	// entry's last run is still queued or running.
	outOverlapping
	// outTooOld: the entry has no state and the tick is before the runner
	// started, so it is not one this runner missed.
	outTooOld
	// outHeld: nothing was claimed or pushed, for a reason that may pass
	// (the job's own unique lock is held): the tick is tried again.
	outHeld
	// outPaused: this call claimed the tick but pushed nothing, as the
	// entry is paused.
	outPaused
)

func (o outcome) String() string {
	switch o {
	case outFired:
		return "fired"
	case outTaken:
		return "taken"
	case outOverlapping:
		return "overlapping"
	case outTooOld:
		return "too old"
	case outHeld:
		return "held"
	case outPaused:
		return "paused"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// loopTick is one tick handed to Fire.
type loopTick struct {
	Entry loopEntry
	// At is the tick's instant: its identity, with the entry's name.
	At time.Time
	// Next is the entry's tick after At, so that its state can be kept
	// until then.
	Next time.Time
	// Since is when the runner started: a tick of an entry that has no
	// state is fired only if it is not before Since.
	Since time.Time
}

// loopConfig configures a runner.
type loopConfig struct {
	// Entries are the entries to run; their names must be distinct.
	Entries []loopEntry
	// Fire claims a tick and pushes its job, atomically: a tick is
	// fired once however many runners call Fire with it.
	Fire func(ctx context.Context, t loopTick) (outcome, error)
	// Clock gives the time; required.
	Clock Clock
	// Grace is how late a tick may be and still be on time, for entries
	// with Missed 0. Default 1 minute.
	Grace time.Duration
	// MaxWait is the longest the loop sleeps before reading the clock
	// again, so that a clock that jumps is noticed. Default 1 minute.
	MaxWait time.Duration
	// Report, if set, receives the outcome of each Fire call, and its
	// error.
	Report func(t loopTick, o outcome, err error)
}

// runner fires the ticks of its entries as they fall due.
type runner struct {
	cfg   loopConfig
	since time.Time
	// done is, per entry, the latest tick this runner saw claimed (fired
	// by it or another): later passes skip the ticks up to it, so that a
	// runner calls Fire about once per tick however often it wakes.
	done map[string]time.Time
	// seen is, per entry, the time of its last pass that left nothing to
	// try again, and its next tick after it: passes until then skip it.
	seen map[string]seenAt
}

type seenAt struct{ at, next time.Time }

// newRunner checks cfg and returns a runner.
func newRunner(cfg loopConfig) (*runner, error) {
	if cfg.Fire == nil || cfg.Clock == nil {
		return nil, errors.New("schedule: the loop needs Fire and Clock")
	}
	seen := map[string]bool{}
	for _, e := range cfg.Entries {
		if e.Name == "" || e.spec == nil {
			return nil, errors.New("schedule: an entry needs a name and a spec")
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("schedule: two entries are named %q", e.Name)
		}
		seen[e.Name] = true
	}
	if cfg.Grace <= 0 {
		cfg.Grace = time.Minute
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Minute
	}
	return &runner{cfg: cfg, done: map[string]time.Time{}, seen: map[string]seenAt{}}, nil
}

// start sets when the runner started (see loopTick.Since). Otherwise the
// first pass sets it to its time less Grace, so that a new entry's tick
// that fell due just before the runner started still runs.
func (r *runner) start(since time.Time) { r.since = since }

// pass fires every due tick of every entry at now (see loopEntry.Due),
// oldest first per entry, and returns the errors of the Fire calls.
func (r *runner) pass(ctx context.Context, now time.Time) error {
	if r.since.IsZero() {
		r.since = now.Add(-r.cfg.Grace)
	}
	var errs []error
	for _, e := range r.cfg.Entries {
		if s, ok := r.seen[e.Name]; ok && !now.Before(s.at) && now.Before(s.next) {
			continue // no tick since its last pass
		}
		settled := true
		for _, at := range e.Due(now, r.cfg.Grace) {
			if !at.After(r.done[e.Name]) {
				continue
			}
			t := loopTick{Entry: e, At: at, Next: e.spec.Next(at), Since: r.since}
			o, err := r.cfg.Fire(ctx, t)
			if r.cfg.Report != nil {
				r.cfg.Report(t, o, err)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("schedule %q, tick %v: %w", e.Name, at, err))
				settled = false
				continue
			}
			switch o {
			case outFired, outTaken, outOverlapping, outPaused:
				r.done[e.Name] = at
			case outHeld:
				settled = false
			}
		}
		if settled {
			r.seen[e.Name] = seenAt{at: now, next: e.spec.Next(now)}
		} else {
			delete(r.seen, e.Name)
		}
	}
	return errors.Join(errs...)
}

// nextAfter returns the earliest tick of any entry after now; zero if
// none.
func (r *runner) nextAfter(now time.Time) time.Time {
	var next time.Time
	for _, e := range r.cfg.Entries {
		n := r.seen[e.Name].next
		if s := r.seen[e.Name]; now.Before(s.at) || !now.Before(s.next) {
			n = e.spec.Next(now)
		}
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next
}

// run makes a pass, sleeps until the next tick of any entry (at most
// MaxWait), and again, until ctx is done; then it returns nil. Errors
// of a pass, or of reading the clock, go to Report (if set) and the loop
// goes on: the missed ticks are tried again at the next pass.
func (r *runner) run(ctx context.Context) error {
	for ctx.Err() == nil {
		wait := time.Second
		now, err := r.cfg.Clock.Now(ctx)
		if err == nil {
			_ = r.pass(ctx, now) // each error went to Report
			wait = r.cfg.MaxWait
			if next := r.nextAfter(now); !next.IsZero() {
				wait = min(max(next.Sub(now), 0), r.cfg.MaxWait)
			}
		} else if r.cfg.Report != nil && ctx.Err() == nil {
			r.cfg.Report(loopTick{}, outTaken, fmt.Errorf("read the clock: %w", err))
		}
		select {
		case <-ctx.Done():
		case <-r.cfg.Clock.After(wait):
		}
	}
	return nil
}
