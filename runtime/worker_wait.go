package runtime

import (
	"context"
	"time"

	"github.com/jobgen/jobgen/internal/nextdue"
)

// bellPoll is the longest single BLPOP of an idle worker. A stopping
// worker ends its BLPOP at once through its wake list (Engine.wake); if
// it cannot, this bounds how long Run waits for it (plus up to one tick
// of Redis's hz, which ends blocking timeouts).
const bellPoll = 250 * time.Millisecond

// idleWait is what one wait for work brought.
type idleWait struct {
	rang     string        // the queue whose doorbell rang, or ""
	jobs     []Reservation // reserved behind the BLPOP
	n        int           // the slots taken for them
	reserved bool          // a reserve for n jobs ran behind the BLPOP
	next     nextdue.Next  // what the migrate behind the BLPOP learned, if reserved
	err      error
}

// idle waits for work after a reserve found none. It holds up to
// batchLimit free slots and sends one pipeline that blocks on the queues'
// doorbells and reserves for those slots the moment a doorbell rings
// (Engine.waitReserve): a push wakes an idle worker with its job in one
// round trip.
//
// Redis ends a BLPOP's timeout only at its hz tick (every 100ms by
// default), far too coarse for a delayed job due in 20ms, so the worker
// keeps its own timer: after wait, it migrates its queues, which moves the
// due jobs and rings their doorbells, and that wakes the BLPOP in flight
// (or another worker's). idle returns when the pipeline does, which is
// within bellPoll; its n is the number of slots it took, and the caller
// returns those the jobs do not use.
//
// rated, if not "", is the (physical) queue whose rate held the last
// reserve back, and wait ends when it lets more through: the worker
// rings its doorbell then, which ends the BLPOP in flight (or another
// worker's), as a push would.
func (w *Worker) idle(ctx context.Context, wait time.Duration, rated string) idleWait {
	if w.cfg.StopWhenEmpty {
		// Polls every few ms until the running jobs are done.
		w.sleep(wait)
		return idleWait{}
	}
	n := w.grabSlots(w.batchLimit())
	done := make(chan idleWait, 1)
	// Cancelled at a stop, for the plain wait's cluster BLPOPs; the
	// pipeline does not get it, so a reserve's reply is never dropped.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- w.waitOrReserve(ctx, wctx, n) }()

	t := time.NewTimer(wait)
	defer t.Stop()
	timer, stop := t.C, w.stopCh
	for {
		select {
		case r := <-done:
			return w.endWait(ctx, r)
		case <-timer:
			timer = nil
			if rated != "" {
				if err := w.e.ring(ctx, rated); err != nil {
					w.log.Warn("ringing a rate-limited queue's doorbell", "queue", rated, "err", err)
				}
				rated = ""
			}
			if next := w.migrateAll(ctx); !next.Due.IsZero() {
				// Nothing was due yet, or more falls due soon: migrate again
				// then, unless the BLPOP in flight returns first.
				t.Reset(next.UntilDue())
				timer = t.C
			}
		case <-stop:
			// End the BLPOP in flight now rather than at its timeout, so
			// that Run returns with no call of the worker in flight. A
			// stopping worker moves no more jobs.
			stop, timer = nil, nil
			cancel()
			if err := w.e.wake(context.WithoutCancel(ctx), w.cfg.Queues, w.wakeID); err != nil {
				w.log.Warn("ending the wait for jobs; stopping when it times out", "err", err)
			}
		}
	}
}

// waitOrReserve waits on the doorbells of the worker's queues, with a
// reserve of n jobs behind the wait where it can (waitReserve), or a
// plain wait under wctx where it cannot.
func (w *Worker) waitOrReserve(ctx, wctx context.Context, n int) idleWait {
	r := idleWait{n: n}
	var ok bool
	if n > 0 {
		var b ReserveResult
		// The queues in their own order, weights aside: the wake list
		// lives in the first one's slot (Engine.wake).
		r.rang, b, ok, r.err = w.e.waitReserve(ctx, w.healthyQueues(), bellPoll, n, w.cfg.RetryAfter, w.holds(), w.wakeID)
		r.jobs = b.Jobs
		r.reserved = ok && r.err == nil
		r.next = b.upcoming()
	}
	if !ok && r.err == nil {
		r.rang, r.err = w.e.wait(wctx, w.healthyQueues(), bellPoll, w.wakeID)
	}
	return r
}

// endWait handles the end of a wait: jobs reserved while the worker was
// paused go back untouched, and a doorbell a stopping worker will not
// answer is passed on.
func (w *Worker) endWait(ctx context.Context, r idleWait) idleWait {
	if len(r.jobs) > 0 && w.pausedCh() != nil {
		refs := make([]Ref, len(r.jobs))
		for i, j := range r.jobs {
			refs[i] = j.Ref
		}
		if err := w.e.unreserve(ctx, refs...); err != nil {
			w.log.Error("giving back jobs taken while pausing", "jobs", len(refs), "err", err)
		}
		r.jobs = nil
	}
	if r.rang != "" && len(r.jobs) == 0 && w.stopping() {
		if err := w.e.ring(ctx, r.rang); err != nil {
			w.log.Error("passing on a doorbell", "queue", r.rang, "err", err)
		}
	}
	return r
}

// migrateAll moves the due jobs of the worker's queues, and returns when
// the next delayed job falls due.
func (w *Worker) migrateAll(ctx context.Context) nextdue.Next {
	var next nextdue.Next
	for _, q := range w.healthyQueues() {
		m, err := w.e.broker().Migrate(ctx, q)
		if err != nil {
			// Once, not every pass: the fetch loop logs the outage.
			if w.migrating.CompareAndSwap(false, true) {
				w.log.Warn("moving due jobs failed; retrying", "queue", q, "err", err)
			}
			continue
		}
		w.migrating.Store(false)
		if next.Now.IsZero() {
			next.Now = m.Now
		}
		next.Due = nextdue.Earliest(next.Due, m.NextDue)
	}
	return next
}
