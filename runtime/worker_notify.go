package runtime

import (
	"context"
	"time"

	"github.com/jobgen/jobgen/internal/notes"
)

// Notes to running workers (internal/notes): a cancel of a running job
// and a restart broadcast, written to Redis first, then told at once on
// the prefix's notes channel (keys.Notes). The engine's one subscription
// (Engine.notifier) puts each note into the box of every running worker
// (Worker.notes); the worker acts on it here with the calls its poll
// makes, so that a note lost, repeated or late changes nothing but how
// soon it acts.

// noteLoop acts on the worker's notes until ctx ends, which is after the
// worker's running jobs have ended: a job can be cancelled during the
// grace period too. restarted is the restart mark read at the start.
func (w *Worker) noteLoop(ctx context.Context, restarted int64) {
	var again []notes.Job // cancels that named no job held, to look at once more
	var recheck <-chan time.Time
	for {
		var cancels []notes.Job
		var restart, catchUp bool
		select {
		case <-ctx.Done():
			return
		case <-w.notes.Ready():
			cancels, restart, catchUp = w.notes.Take()
		case <-recheck:
			cancels, again, recheck = again, nil, nil
			w.cancelsNoted(ctx, cancels)
			continue
		}
		if restart || catchUp {
			w.restartNoted(ctx, restarted)
		}
		if catchUp {
			w.beat(ctx)
			continue
		}
		if missed := w.cancelsNoted(ctx, cancels); len(missed) > 0 && len(again) < notes.Max {
			again = append(again, missed...)
			if recheck == nil {
				recheck = time.After(notes.Recheck)
			}
		}
	}
}

// cancelsNoted runs the heartbeat's extend of the jobs the worker holds
// under the queues and IDs of cancels, and returns the cancels that
// named none.
func (w *Worker) cancelsNoted(ctx context.Context, cancels []notes.Job) (missed []notes.Job) {
	if len(cancels) == 0 {
		return nil
	}
	named := make(map[notes.Job]bool, len(cancels))
	for _, c := range cancels {
		named[c] = true
	}
	found := make(map[notes.Job]bool, len(cancels))
	var refs []Ref
	w.mu.Lock()
	for r := range w.active {
		if k := (notes.Job{Queue: r.Queue, ID: r.ID}); named[k] {
			refs = append(refs, r)
			found[k] = true
		}
	}
	w.mu.Unlock()
	for c := range named {
		if !found[c] {
			missed = append(missed, c)
		}
	}
	if len(refs) > 0 {
		sent := time.Now()
		lost, cancelled, err := w.e.extend(ctx, w.cfg.RetryAfter, refs...)
		w.extended(ctx, refs, lost, cancelled, sent, err)
	}
	return missed
}

// restartNoted stops the worker if the restart mark is later than
// restarted, the one read at its start (Inspector.RestartWorkers).
func (w *Worker) restartNoted(ctx context.Context, restarted int64) {
	if w.stopping() {
		return
	}
	mark, err := w.e.lastRestart(ctx)
	if err == nil && mark > restarted {
		w.log.Info("restart broadcast received")
		w.stop("restart broadcast")
	}
}
