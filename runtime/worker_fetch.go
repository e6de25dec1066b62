package runtime

import (
	"context"
	"runtime/metrics"
	"time"
)

// maxBatch is the most jobs one reserve call takes.
const maxBatch = 1000

// batchLimit is the most jobs the next reserve may take.
func (w *Worker) batchLimit() int {
	n := min(w.cfg.Concurrency, maxBatch)
	if w.cfg.Once {
		n = 1
	}
	if w.cfg.MaxJobs > 0 {
		n = min(n, w.cfg.MaxJobs-w.reserved)
	}
	return max(n, 1)
}

// grabSlots takes up to n more free slots without blocking.
func (w *Worker) grabSlots(n int) int {
	got := 0
	for got < n {
		select {
		case <-w.slots:
			got++
		default:
			return got
		}
	}
	return got
}

// running is the number of jobs holding a slot.
func (w *Worker) running() int { return w.cfg.Concurrency - len(w.slots) }

func (w *Worker) pausedCh() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resumeCh
}

// sleep waits for d or a stop.
func (w *Worker) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.stopCh:
	}
}

// limitReached names the stop condition that holds, if any.
func (w *Worker) limitReached(start time.Time) string {
	switch {
	case w.cfg.Once && w.reserved >= 1:
		return "once"
	case w.cfg.MaxJobs > 0 && w.reserved >= w.cfg.MaxJobs:
		return "max jobs"
	case w.cfg.MaxTime > 0 && time.Since(start) >= w.cfg.MaxTime:
		return "max time"
	case w.cfg.Memory > 0 && heapMB() >= uint64(w.cfg.Memory):
		return "memory"
	}
	return ""
}

// heapMB reads the live Go heap without stopping the world.
func heapMB() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() >> 20
}

// upcoming is what a fruitless reserve learned about the queues.
type upcoming struct {
	now    time.Time // Redis clock
	due    time.Time // earliest delayed job, zero if none
	expiry time.Time // earliest lease deadline, zero if none
}

// reserve takes up to n jobs from the queues in priority order.
func (w *Worker) reserve(ctx context.Context, n int) ([]Reservation, upcoming, error) {
	var jobs []Reservation
	var next upcoming
	for _, q := range w.cfg.Queues {
		b, err := w.e.Reserve(ctx, q, n-len(jobs), w.cfg.RetryAfter)
		if err != nil {
			return jobs, next, err
		}
		next.now = b.Now
		next.due = earliest(next.due, b.NextDue)
		next.expiry = earliest(next.expiry, b.NextExpiry)
		if jobs == nil {
			jobs = b.Jobs
		} else {
			jobs = append(jobs, b.Jobs...)
		}
		if len(jobs) == n {
			break
		}
	}
	return jobs, next, nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
