package runtime

import (
	"context"
	"runtime/metrics"
	"time"

	"github.com/jobgen/jobgen/internal/coalesce"
	"github.com/jobgen/jobgen/internal/nextdue"
)

// maxBatch is the most jobs one reserve call takes.
const maxBatch = 1000

// batchLimit is the most jobs the next reserve may take.
func (w *Worker) batchLimit() int {
	n := min(w.cfg.Concurrency+w.cfg.Prefetch, maxBatch)
	if w.cfg.Once {
		n = 1
	}
	if w.cfg.MaxJobs > 0 {
		n = min(n, w.cfg.MaxJobs-int(w.reserved.Load()))
	}
	return max(n, 1)
}

// helped says whether the worker runs a second reserver (help). It does
// not where the number of jobs reserved must be counted call by call
// (Once, MaxJobs), nor with a single slot, which one reserve fills.
func (w *Worker) helped() bool {
	return !w.cfg.Once && w.cfg.MaxJobs == 0 && cap(w.slots) > 1
}

// markBusy records that a reserve took all the jobs it asked for, so the
// queues likely hold more: it wakes help.
func (w *Worker) markBusy() {
	select {
	case w.busy <- struct{}{}:
	default:
	}
}

// help is a second reserver. While the queues are busy (markBusy), it
// takes the slots that free up while fetch's reserve is out and reserves
// for them, so that two reserves are in flight instead of one and a
// freed slot waits for half a round trip, not a whole one. It never waits
// for jobs: when the queues run dry, fetch's wait takes over. It holds
// slots only as fetch does, so it never reserves beyond Concurrency +
// Prefetch; a reserve that fails is left for fetch to notice and retry.
func (w *Worker) help(ctx context.Context) {
	for {
		select {
		case <-w.busy:
		case <-w.stopCh:
			return
		}
		select {
		case <-w.slots:
		case <-w.stopCh:
			return
		}
		if w.stopping() || w.pausedCh() != nil {
			w.slots <- struct{}{}
			continue
		}
		n := 1 + w.grabSlots(w.batchLimit()-1)
		jobs, _, err := w.reserve(ctx, n)
		w.accept(jobs, n)
		if err == nil && len(jobs) == n {
			w.markBusy()
		}
	}
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

// holds says whether the worker reserves its jobs held (Engine.reserve):
// with Prefetch, so that a job that waits for a slot and never starts,
// its worker killed or stopped, keeps its attempt. Each then starts with
// one more call (Engine.start), for the jobs that get slots at once.
func (w *Worker) holds() bool { return w.cfg.Prefetch > 0 }

// running is the number of jobs holding a slot: running or prefetched.
func (w *Worker) running() int { return cap(w.slots) - len(w.slots) }

// startJobs starts the reserved jobs in the order they were reserved, each
// when a run slot is free. Prefetched jobs wait here, leased and
// heartbeated. At a stop that ends taking work (a signal, a restart, max
// time, memory) those not started are released at once; at a stop by
// MaxJobs or Once they were reserved within the limit, and run.
func (w *Worker) startJobs(base context.Context, start time.Time) {
	var waiting []Ref
	for res := range w.queued {
		if !w.startable() {
			w.untrack(res.Ref)
			waiting = append(waiting, res.Ref)
			continue
		}
		select {
		case <-w.runSlots:
		case <-w.stopCh:
			if !w.startable() {
				w.untrack(res.Ref)
				waiting = append(waiting, res.Ref)
				continue
			}
			<-w.runSlots
		}
		if reason := w.resourceLimit(start); reason != "" {
			w.stop(reason) // reached while this job waited
			if !w.startable() {
				w.runSlots <- struct{}{}
				w.untrack(res.Ref)
				waiting = append(waiting, res.Ref)
				continue
			}
		}
		w.runners.Do(func() {
			if res.held() && res.Err == nil {
				started, ok := w.startHeld(res)
				if !ok {
					w.runSlots <- struct{}{}
					return
				}
				res = started
			}
			w.process(base, res)
			w.runSlots <- struct{}{}
		})
	}
	if len(waiting) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := w.e.unreserve(ctx, waiting...)
	w.gaveBack(waiting, err)
	if err != nil {
		w.log.Error("giving back jobs not started at stop", "jobs", len(waiting), "err", err)
	}
	for range waiting {
		w.slots <- struct{}{}
		w.wg.Done()
	}
}

// startReq asks the starter to start a held job.
type startReq struct {
	res  Reservation
	done chan startReq // gets the request back, answered
	ok   bool
	err  error
}

// starter starts held jobs (Engine.start) in batches: it takes what has
// queued up while the previous call was out, up to 1,000, as the acker
// does with acks (coalesce.Take). It ends when w.starts closes.
func (w *Worker) starter(ctx context.Context) {
	batch := make([]*startReq, 0, maxBatch)
	jobs := make([]Reservation, 0, maxBatch)
	for req := range w.starts {
		batch, _ = coalesce.Take(w.starts, append(batch[:0], req), maxBatch)
		jobs = jobs[:0]
		for _, r := range batch {
			jobs = append(jobs, r.res)
		}
		started, ok, err := w.e.start(ctx, jobs)
		for i, r := range batch {
			r.res, r.ok, r.err = started[i], ok[i], err
			r.done <- *r
		}
	}
}

// startHeld starts a held job through the starter, as it gets a run
// slot, and returns it as started. A job it cannot start (its lease ran
// out, or Redis is out of reach) is let go, its attempt unused: its
// lease runs out and it goes back to its queue.
func (w *Worker) startHeld(res Reservation) (Reservation, bool) {
	req := &startReq{res: res, done: make(chan startReq, 1)}
	w.starts <- req
	got := <-req.done
	started, ok, err := got.res, got.ok, got.err
	w.untrack(res.Ref)
	if ok {
		w.track(started.Ref, func(error) {}, RunningJob{}) // process tracks it anew
		return started, true
	}
	if err != nil {
		w.log.Warn("a prefetched job could not start; it goes back to its queue, its attempt unused, when its lease runs out",
			"queue", res.Queue, "id", res.ID, "err", err)
	} else {
		w.log.Warn("a prefetched job's lease ran out before it could start; it went back to its queue, its attempt unused",
			"queue", res.Queue, "id", res.ID)
	}
	w.slots <- struct{}{}
	w.wg.Done()
	return res, false
}

// startable says whether a reserved job may still start.
func (w *Worker) startable() bool {
	if !w.stopping() {
		return true
	}
	switch w.StopReason() {
	case "max jobs", "once", "empty":
		return true
	}
	return false
}

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
	case w.cfg.Once && w.reserved.Load() >= 1:
		return "once"
	case w.cfg.MaxJobs > 0 && w.reserved.Load() >= int64(w.cfg.MaxJobs):
		return "max jobs"
	}
	return w.resourceLimit(start)
}

// resourceLimit names the limit on time or memory that holds, if any. It
// is checked before each job starts, prefetched ones too.
func (w *Worker) resourceLimit(start time.Time) string {
	switch {
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

// upcoming is what b tells of the queue it came from.
func (b ReserveResult) upcoming() nextdue.Next {
	now := b.clock
	if now.IsZero() {
		now = b.Now
	}
	return nextdue.Next{Now: now, Due: b.NextDue, Expiry: b.NextExpiry, Open: b.open, Rated: b.openQueue}
}

// reserve takes up to n jobs from the queues in priority order. A queue
// whose keys Redis refuses is skipped for a while (worker_quarantine.go),
// and the queues after it are served.
func (w *Worker) reserve(ctx context.Context, n int) ([]Reservation, nextdue.Next, error) {
	var jobs []Reservation
	var next nextdue.Next
	for _, q := range w.queues() {
		b, err := w.e.reserve(ctx, q, n-len(jobs), w.cfg.RetryAfter, w.holds())
		if w.noteReserve(q, err) {
			continue
		}
		if err != nil {
			return jobs, next, err
		}
		u := b.upcoming()
		if next.Now.IsZero() {
			// The first queue's reading, the earliest: a wait counted from
			// it ends no sooner than one counted from a later one.
			next.Now = u.Now
		}
		next.Merge(u)
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
