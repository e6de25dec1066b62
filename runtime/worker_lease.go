package runtime

import (
	"context"
	"time"

	"github.com/jobgen/jobgen/internal/coalesce"
	"github.com/jobgen/jobgen/internal/outage"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// heartbeat renews the leases of running jobs every RetryAfter/3, and
// the records of the failed jobs' hooks it runs (hooks.go). A job
// whose lease is lost (another worker holds it now, or Redis could not be
// reached before the lease ran out) has its context cancelled with cause
// ErrLeaseLost; a job that was cancelled (Inspector.Cancel) with a
// *CancelledError.
func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(w.cfg.RetryAfter / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.beat(ctx)
	}
}

// beat is one heartbeat: it renews the leases of running jobs and the
// records of the hooks being run, and ends the contexts of jobs found
// cancelled or lost. A worker's notes (worker_notify.go) run one at once
// when their subscription is made or made again, for what a note missed.
func (w *Worker) beat(ctx context.Context) {
	w.mu.Lock()
	refs := make([]Ref, 0, len(w.active))
	for r := range w.active {
		refs = append(refs, r)
	}
	hooking := make([]Ref, 0, len(w.hooking))
	for r := range w.hooking {
		hooking = append(hooking, r)
	}
	w.mu.Unlock()
	if len(hooking) > 0 {
		if err := w.e.renewHooks(ctx, hooking); err != nil && ctx.Err() == nil {
			w.log.Warn("renewing the records of hooks being run failed", "jobs", len(hooking), "err", err)
		}
	}
	if len(refs) == 0 {
		return
	}
	sent := time.Now()
	lost, cancelled, err := w.e.extend(ctx, w.cfg.RetryAfter, refs...)
	w.extended(ctx, refs, lost, cancelled, sent, err)
}

// extended applies a heartbeat's extend of refs, sent at sent: the
// contexts of jobs cancelled or lost end, and the others' leases run
// RetryAfter from sent. After an error, the jobs whose lease ran out by
// this process's clock end as lost.
func (w *Worker) extended(ctx context.Context, refs, lost, cancelled []Ref, sent time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("heartbeat failed", "jobs", len(refs), "err", err)
		}
		for r, a := range w.active {
			if time.Now().After(a.leaseUntil) {
				a.cancel(&LeaseLostError{Queue: r.Queue, ID: r.ID})
			}
		}
		return
	}
	gone := make(map[Ref]bool, len(lost)+len(cancelled))
	for _, r := range cancelled {
		gone[r] = true
		if a := w.active[r]; a != nil {
			a.cancel(&CancelledError{Queue: r.Queue, ID: r.ID})
		}
	}
	for _, r := range lost {
		gone[r] = true
		if a := w.active[r]; a != nil {
			a.cancel(&LeaseLostError{Queue: r.Queue, ID: r.ID})
		}
	}
	for _, r := range refs {
		if a := w.active[r]; a != nil && !gone[r] {
			a.leaseUntil = sent.Add(w.cfg.RetryAfter)
		}
	}
}

// ackItem is a finished job waiting for its ack: once the ack is
// accepted, the acker emits ev as JobProcessed and runs what follows the
// end of env (its unique lock).
type ackItem struct {
	ref Ref
	env *Envelope
	ev  Event
	// progressed: the job reported progress, whose entry the ack deletes.
	progressed bool
	fin        *Finish // what the job leaves behind (finish.go); nil: a plain ack
	// step is the end of a workflow step the ack records
	// (workflow_ack.go); nil for any other job.
	step *jobrdb.StepEnd
}

// acker deletes finished jobs in batches (coalesce.Loop): it takes what
// has queued up while the previous batch was in flight, up to 1,000 at a
// time. When ackStop closes it flushes what is queued and closes ackDone.
func (w *Worker) acker(ctx context.Context) {
	coalesce.Loop(ctx, w.acks, w.ackStop, w.ackDone, maxBatch, w.ackBatch)
}

// queueAck hands a finished job to the acker, or acks it at once if the
// acker has finished (a handler that outlived the worker's stop).
func (w *Worker) queueAck(ctx context.Context, it ackItem) {
	coalesce.Hand(ctx, w.acks, w.ackDone, it, w.ackBatch)
}

// ackBatch acks items, tried again through an outage (settleRetried),
// then emits JobProcessed for each job whose ack was accepted and
// releases its unique lock. A refused ack reports nothing.
func (w *Worker) ackBatch(ctx context.Context, items []ackItem) {
	if k := stepsLast(items); k < len(items) {
		w.ackSteps(ctx, items[k:])
		if items = items[:k]; len(items) == 0 {
			return
		}
	}
	refs := make([]Ref, len(items))
	var progressed map[string]bool
	for i, it := range items {
		refs[i] = it.ref
		if it.progressed {
			if progressed == nil {
				progressed = map[string]bool{}
			}
			progressed[it.ref.ID] = true
		}
	}
	var lost []Ref
	tries := 0
	err := w.settleRetried(ctx, "ack", func() error {
		tries++
		var err error
		lost, err = w.e.ackOrFinish(ctx, items, refs, progressed)
		return err
	}, "jobs", len(refs))
	if err != nil {
		w.log.Error("ack failed; the jobs will run again when their leases run out", "jobs", len(refs), "err", err)
		return
	}
	var refused map[Ref]bool
	if len(lost) > 0 {
		refused = w.ackRefused(ctx, lost, tries > 1)
	}
	for _, it := range items {
		if refused[it.ref] || it.env == nil {
			continue
		}
		w.emit(it.ev, JobProcessed)
		w.ended(ctx, it.env)
	}
}

// ackRefused logs acks that Redis refused, and returns those whose job
// was not acked. A job whose state is gone, after an ack that was tried
// more than once, was most likely deleted by an earlier try whose reply
// was lost (Redis restarted or the connection broke): it does not run
// again, and counts as acked. A job held under another token was taken
// over by another worker, and may run again.
func (w *Worker) ackRefused(ctx context.Context, lost []Ref, retried bool) (refused map[Ref]bool) {
	var gone map[Ref]bool
	if retried {
		gone, _ = w.e.absent(ctx, lost) // on error, none is taken for gone
	}
	refused = make(map[Ref]bool, len(lost))
	var taken []Ref
	var goneIDs []string
	for _, r := range lost {
		if gone[r] {
			goneIDs = append(goneIDs, r.ID)
			continue
		}
		refused[r] = true
		taken = append(taken, r)
	}
	if len(goneIDs) > 0 {
		w.log.Info("ack found jobs gone: an earlier try of the ack went through before its reply was lost", "jobs", len(goneIDs), "ids", goneIDs)
	}
	if len(taken) > 0 {
		w.log.Warn("ack of a job whose lease was lost; it may run again", "jobs", len(taken), "err", lostError(taken))
	}
	return refused
}

// settleRetried runs settle, an ack, release or fail of jobs this worker
// holds, and runs it again when it fails (outage.Retry), for as long as
// the jobs' leases may last, RetryAfter from the first try; a stopping
// worker gives up after 5 tries. A lost lease is an answer, returned at
// once.
func (w *Worker) settleRetried(ctx context.Context, what string, settle func() error, attrs ...any) error {
	return outage.Retry(ctx, w.cfg.RetryAfter, ErrLeaseLost, w.stopping, w.log, what, settle, attrs...)
}

// drain waits for running jobs to finish within Grace. When Grace runs
// out it cancels their contexts with ErrWorkerStopping, and waits for
// them to settle: a handler that returns success is acked, and one cut
// short goes back to its queue with its attempt returned (giveBack). A
// handler that ignores its context is abandoned after abandonAfter
// (attempt), and its job given back the same way.
func (w *Worker) drain() {
	done := make(chan struct{})
	go func() {
		w.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(w.cfg.Grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	w.mu.Lock()
	n := len(w.active)
	for _, a := range w.active {
		a.cancel(ErrWorkerStopping)
	}
	w.mu.Unlock()
	w.log.Warn("grace period over; running jobs cancelled, to go back to their queues with their attempts returned", "jobs", n)
	// Settles give up after 5 tries once the worker stops (about 150 ms);
	// past this bound a job comes back when its lease runs out.
	select {
	case <-done:
	case <-time.After(abandonAfter + 5*time.Second):
		w.log.Error("jobs still settling after the grace; they come back when their leases run out")
	}
}

// stepsLast moves the items with a step's end to record after the others,
// and returns the index of the first of them.
func stepsLast(items []ackItem) int {
	k := 0
	for i := range items {
		if items[i].step == nil {
			items[k], items[i] = items[i], items[k]
			k++
		}
	}
	return k
}
