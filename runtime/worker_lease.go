package runtime

import (
	"context"
	"errors"
	"time"
)

// heartbeat renews the leases of running jobs every RetryAfter/3. A job
// whose lease is lost (another worker holds it now, or Redis could not be
// reached before the lease ran out) has its context cancelled with cause
// ErrLeaseLost.
func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(w.cfg.RetryAfter / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		refs := make([]Ref, 0, len(w.active))
		for r := range w.active {
			refs = append(refs, r)
		}
		w.mu.Unlock()
		if len(refs) == 0 {
			continue
		}
		sent := time.Now()
		lost, err := w.e.Extend(ctx, w.cfg.RetryAfter, refs...)
		w.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error("heartbeat failed", "jobs", len(refs), "err", err)
			}
			for r, a := range w.active {
				if time.Now().After(a.leaseUntil) {
					a.cancel(&LeaseLostError{Queue: r.Queue, ID: r.ID})
				}
			}
			w.mu.Unlock()
			continue
		}
		gone := make(map[Ref]bool, len(lost))
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
		w.mu.Unlock()
	}
}

// acker deletes finished jobs in batches: it takes what has queued up
// while the previous batch was in flight, up to 1,000 at a time. When
// ackStop closes it flushes what is queued and closes ackDone.
func (w *Worker) acker(ctx context.Context) {
	defer close(w.ackDone)
	buf := make([]Ref, 0, maxBatch)
	for {
		select {
		case ref := <-w.acks:
			w.ackBatch(ctx, w.take(append(buf[:0], ref)))
		case <-w.ackStop:
			for b := w.take(buf[:0]); len(b) > 0; b = w.take(buf[:0]) {
				w.ackBatch(ctx, b)
			}
			return
		}
	}
}

// take appends queued acks to buf, without blocking, up to maxBatch.
func (w *Worker) take(buf []Ref) []Ref {
	for len(buf) < maxBatch {
		select {
		case r := <-w.acks:
			buf = append(buf, r)
		default:
			return buf
		}
	}
	return buf
}

// queueAck hands a finished job to the acker, or acks it at once if the
// acker has finished (a handler that outlived the worker's stop).
func (w *Worker) queueAck(ctx context.Context, ref Ref) {
	select {
	case w.acks <- ref:
	case <-w.ackDone:
		w.ackBatch(ctx, []Ref{ref})
	}
}

// ackBatch acks refs, tried again through an outage (settleRetried).
func (w *Worker) ackBatch(ctx context.Context, refs []Ref) {
	err := w.settleRetried(ctx, "ack", func() error { return w.e.Ack(ctx, refs...) }, "jobs", len(refs))
	switch {
	case err == nil:
	case errors.Is(err, ErrLeaseLost):
		w.log.Warn("ack of a job whose lease was lost; it may run again", "err", err)
	default:
		w.log.Error("ack failed; the jobs will run again when their leases run out", "jobs", len(refs), "err", err)
	}
}

// settleRetried runs settle, an ack, release or fail of jobs this worker
// holds, and runs it again when it fails (Redis is down, say): 10 ms
// later at first, then up to a second apart, for as long as the jobs'
// leases may last, RetryAfter from the first try, as a heartbeat renewed
// them at most that long before. A settle that gets through in that time
// spares the jobs a second run, and a job whose tries are used up a
// failure as an attempt that did not finish. A stopping worker gives up
// after 5 tries, so that it does not wait on a Redis that is down. A lost
// lease is an answer, returned at once.
func (w *Worker) settleRetried(ctx context.Context, what string, settle func() error, attrs ...any) error {
	delay := 10 * time.Millisecond
	until := time.Now().Add(w.cfg.RetryAfter)
	for try := 1; ; try++ {
		err := settle()
		switch {
		case err == nil:
			if try > 1 {
				w.log.Info(what+" went through", append(attrs, "tries", try)...)
			}
			return nil
		case errors.Is(err, ErrLeaseLost), ctx.Err() != nil,
			!time.Now().Add(delay).Before(until), try >= 5 && w.stopping():
			return err
		case try == 1:
			w.log.Warn(what+" failed; trying again", append(attrs, "err", err)...)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		delay = min(2*delay, time.Second)
	}
}

// drain waits for running jobs to finish within Grace. When Grace runs
// out it cancels their contexts and releases their jobs, so nothing is
// lost.
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
	refs := make([]Ref, 0, len(w.active))
	for r, a := range w.active {
		refs = append(refs, r)
		a.cancel(ErrWorkerStopping)
	}
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := w.e.Release(ctx, ReleaseOpts{}, refs...)
	w.gaveBack(refs, err)
	if err != nil {
		w.log.Error("releasing running jobs at stop", "jobs", len(refs), "err", err)
	}
	w.log.Warn("grace period over; running jobs released", "jobs", len(refs))
	select {
	case <-done:
	case <-time.After(abandonAfter):
	}
}
