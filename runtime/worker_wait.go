package runtime

import (
	"context"
	"sync/atomic"
	"time"
)

// bellPoll is the longest single BLPOP of a worker's doorbell listener;
// it bounds how long the listener outlives its worker.
const bellPoll = 250 * time.Millisecond

// bell lets the fetch loop wait for a doorbell and a local timer at once.
// Redis ends a BLPOP's timeout only at its hz tick (every 100ms by
// default), far too coarse for a delayed job due in 20ms, so the BLPOP
// runs in a listener goroutine while the fetch loop keeps its own timer.
//
// The two sides hand over with waiting: whoever turns it from true to
// false owns the wake-up. A doorbell the listener takes after the fetch
// loop stopped waiting is rung again, so another worker can have it.
type bell struct {
	w       *Worker
	req     chan struct{} // the fetch loop asks the listener to listen
	rang    chan struct{} // the listener wakes the fetch loop
	waiting atomic.Bool   // the fetch loop is in wait
	pending atomic.Bool   // the listener is listening
}

func newBell(w *Worker) *bell {
	return &bell{w: w, req: make(chan struct{}, 1), rang: make(chan struct{}, 1)}
}

// run is the listener goroutine.
func (b *bell) run(ctx context.Context) {
	for {
		select {
		case <-b.req:
			b.listen(ctx)
		case <-ctx.Done():
			return
		}
	}
}

func (b *bell) listen(ctx context.Context) {
	for {
		q, err := b.w.e.Wait(ctx, b.w.cfg.Queues, bellPoll)
		if ctx.Err() != nil {
			return
		}
		switch {
		case q != "":
			if b.waiting.CompareAndSwap(true, false) {
				b.rang <- struct{}{}
			} else if err := b.w.e.ring(ctx, q); err != nil {
				b.w.log.Error("passing on a doorbell", "queue", q, "err", err)
			}
		case err != nil:
			b.w.log.Error("waiting for jobs", "err", err)
			time.Sleep(50 * time.Millisecond)
			if b.waiting.CompareAndSwap(true, false) {
				b.rang <- struct{}{} // let the fetch loop try, and back off
			}
		case b.waiting.Load():
			continue
		}
		b.pending.Store(false)
		// The fetch loop may have started waiting again meanwhile.
		if !b.waiting.Load() || !b.pending.CompareAndSwap(false, true) {
			return
		}
	}
}

// wait returns when a doorbell of the worker's queues rings, d passes or
// the worker stops.
func (b *bell) wait(d time.Duration, stop <-chan struct{}) {
	b.waiting.Store(true)
	if b.pending.CompareAndSwap(false, true) {
		b.req <- struct{}{}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-b.rang:
		return
	case <-t.C:
	case <-stop:
	}
	if !b.waiting.CompareAndSwap(true, false) {
		<-b.rang // the bell rang as the timer fired
	}
}
