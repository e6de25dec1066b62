package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobgen/jobgen/internal/eviction"
	"github.com/jobgen/jobgen/internal/nextdue"
	"github.com/jobgen/jobgen/internal/notes"
	"github.com/jobgen/jobgen/internal/queueorder"
	"github.com/jobgen/jobgen/internal/runpool"
)

// Worker runs jobs from its queues through a Router: Laravel's
// queue:work. It reserves jobs in batches sized to its free capacity,
// runs each in its own goroutine under a lease that a heartbeat renews,
// and acks finished jobs in batches.
type Worker struct {
	e      *Engine
	r      *Router
	cfg    WorkerConfig
	log    *slog.Logger
	events listeners

	slots    chan struct{} // one token per job the worker may hold: running or prefetched
	runSlots chan struct{} // one token per job that may run now (Concurrency)
	queued   chan Reservation
	acks     chan ackItem
	starts   chan *startReq // held jobs to start (Prefetch); nil without
	ackStop  chan struct{}  // closed when the acker should flush and end
	ackDone  chan struct{}  // closed when the acker has ended
	wg       sync.WaitGroup // running jobs
	follows  sync.WaitGroup // follow-ups of workflow steps' acks (workflow_ack.go)
	// stepAcks counts the steps whose ack records their end, queued or
	// in flight, with their follow-ups; stepAcked, those done so far.
	stepAcks, stepAcked atomic.Int64

	mu       sync.Mutex
	active   map[Ref]*activeJob
	hooking  map[Ref]bool  // failed jobs whose hooks this worker runs (hooks.go)
	resumeCh chan struct{} // non-nil while paused
	started  bool

	stopOnce   sync.Once
	stopCh     chan struct{}
	stopReason atomic.Value // string

	wakeID    string        // names the worker's wake list (Engine.wake)
	reserved  atomic.Int64  // jobs reserved so far
	busy      chan struct{} // holds a token while the last reserve took all it asked for
	waited    bool          // the fetch loop has waited for jobs; fetch loop only
	migrating atomic.Bool   // a move of due jobs failed and none has worked since
	emptied   *nextdue.Next // set when the reserve behind a wait emptied the queue; fetch loop only
	processed atomic.Int64  // jobs finished, whatever the outcome
	returned  atomic.Int64  // jobs given back to their queues at a stop (WorkerStats.Returned)
	// givenBackNewer counts jobs given back for a newer worker, newer logs
	// the first of each name and version, and waitingNewer keeps them for
	// the worker's record (schema_version.go, newer_monitor.go).
	givenBackNewer atomic.Int64
	newer          newerLog
	waitingNewer   newerWaiting
	mon            monitor               // counts and running jobs for the worker's record (worker_monitor.go)
	steps          []jobStep             // batches, chains and unique locks, at fixed points of a job's run (worker_steps.go)
	sick           queueorder.Quarantine // queues whose keys Redis refuses, skipped for a while (worker_quarantine.go)
	runners        *runpool.Pool         // the goroutines jobs and handlers run on (internal/runpool)
	notes          *notes.Box            // cancels and restarts told at once (worker_notify.go)
}

// WorkerStats counts what a worker has done with its jobs.
type WorkerStats struct {
	// Returned is the jobs the worker gave back to their queues at a stop
	// without finishing them: jobs still running when Grace ran out, and
	// reserved jobs that had not started. They are ready again, for any
	// worker. A job whose lease was lost by then, or that a give-back
	// failed to reach Redis for, is not counted: it returns when its
	// lease runs out.
	Returned int64
	// GivenBackNewer is the jobs the worker gave back, their attempts
	// unused, because their schema version is newer than it knows: they
	// wait for a newer worker (docs/changing-jobs.md).
	GivenBackNewer int64
}

// Stats returns the worker's counts so far; once Run has returned, its
// final counts.
func (w *Worker) Stats() WorkerStats {
	return WorkerStats{Returned: w.returned.Load(), GivenBackNewer: w.givenBackNewer.Load()}
}

// gaveBack counts the jobs of refs that a give-back at a stop returned
// to their queues, err being its result: all of them, less those whose
// lease was lost, or none if the call failed.
func (w *Worker) gaveBack(refs []Ref, err error) {
	n := len(refs)
	if err != nil {
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, e := range errs {
			if !errors.Is(e, ErrLeaseLost) {
				return
			}
			n--
		}
	}
	w.returned.Add(int64(max(n, 0)))
}

// activeJob is a running job the heartbeat keeps alive.
type activeJob struct {
	cancel     context.CancelCauseFunc
	leaseUntil time.Time // by this process's clock
	// run is the job's name, attempt and start, once it runs (the
	// workers page's "running now"); zero while it waits to start.
	run RunningJob
}

// NewWorker returns a worker that takes jobs from e and runs them through
// r. It checks cfg and r's registrations.
func NewWorker(e *Engine, r *Router, cfg WorkerConfig) (*Worker, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("worker %s: %w", cfg.Name, err)
	}
	w := &Worker{
		e: e, r: r, cfg: cfg,
		log:      cfg.Logger.With("worker", cfg.Name),
		slots:    make(chan struct{}, cfg.Concurrency+cfg.Prefetch),
		runSlots: make(chan struct{}, cfg.Concurrency),
		queued:   make(chan Reservation, cfg.Concurrency+cfg.Prefetch),
		acks:     make(chan ackItem, 2*cfg.Concurrency),
		ackStop:  make(chan struct{}),
		ackDone:  make(chan struct{}),
		active:   map[Ref]*activeJob{},
		hooking:  map[Ref]bool{},
		stopCh:   make(chan struct{}),
		busy:     make(chan struct{}, 1),
		runners:  runpool.New(2 * cfg.Concurrency), // a process and a handler per running job
		wakeID:   NewID(),
		notes:    notes.NewBox(),
	}
	w.steps = newSteps(busEnv{e: e, r: r, log: w.log, retryAfter: cfg.RetryAfter})
	if w.holds() {
		w.starts = make(chan *startReq, cfg.Concurrency)
	}
	for range cfg.Concurrency + cfg.Prefetch {
		w.slots <- struct{}{}
	}
	for range cfg.Concurrency {
		w.runSlots <- struct{}{}
	}
	w.warnReleasingOnOneTry() // worker_middleware.go
	w.events.add(w.logJob)    // worker_log.go
	return w, nil
}

// Subscribe calls fn with every event of this worker. fn runs in the
// goroutine of the job or loop the event belongs to: keep it quick and
// safe for concurrent use. Subscribe before Run.
func (w *Worker) Subscribe(fn func(Event)) { w.events.add(fn) }

// Pause stops the worker from taking new jobs until Resume; running jobs
// go on (SIGUSR2 under RunWithSignals).
func (w *Worker) Pause() {
	w.mu.Lock()
	if w.resumeCh == nil {
		w.resumeCh = make(chan struct{})
	}
	w.mu.Unlock()
}

// Resume undoes Pause (SIGCONT under RunWithSignals).
func (w *Worker) Resume() {
	w.mu.Lock()
	if w.resumeCh != nil {
		close(w.resumeCh)
		w.resumeCh = nil
	}
	w.mu.Unlock()
}

// Stop asks the worker to stop taking jobs and return from Run once its
// running jobs finish, within Grace.
func (w *Worker) Stop() { w.stop("stopped") }

func (w *Worker) stop(reason string) {
	w.stopOnce.Do(func() {
		w.stopReason.Store(reason)
		close(w.stopCh)
	})
}

// StopReason says why Run returned: "SIGTERM" or "SIGINT" (under
// RunWithSignals), "context done", "restart broadcast",
// "max jobs", "max time", "memory", "once", "empty" or "stopped".
func (w *Worker) StopReason() string {
	r, _ := w.stopReason.Load().(string)
	return r
}

func (w *Worker) stopping() bool {
	select {
	case <-w.stopCh:
		return true
	default:
		return false
	}
}

// Run processes jobs until ctx is done or a stop condition holds, then
// stops gracefully: it takes no new job, lets running handlers finish
// within Grace, releases the jobs of handlers still running after that,
// and flushes its acks. It returns nil for every such stop, a ctx done
// before Run was called included (it then takes no job). It returns an
// error only if it cannot start: Redis unreachable at start. A Redis
// outage while running is logged and retried, not returned. When Run
// returns, no Redis call of the worker is in flight, so the engine may be
// closed at once. Run may be called once.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return errors.New("jobgen: Worker.Run called twice")
	}
	w.started = true
	w.mu.Unlock()

	if ctx.Err() != nil {
		w.stop("context done")
		w.stopped()
		return nil
	}
	restarted, err := w.e.lastRestart(ctx)
	if err != nil {
		if ctx.Err() != nil {
			w.stop("context done")
			w.stopped()
			return nil
		}
		return fmt.Errorf("worker %s: start: %w", w.cfg.Name, err)
	}
	// A Redis that may evict keys is refused unless the config accepts
	// the risk, which is then logged once (eviction.go).
	if err := eviction.Check(ctx, w.e.store, w.e.cfg.AllowEviction, w.log); err != nil {
		return fmt.Errorf("worker %s: start: %w", w.cfg.Name, err)
	}
	if err := w.e.applyQueueLimits(ctx); err != nil {
		return fmt.Errorf("worker %s: start: %w", w.cfg.Name, err)
	}
	start := time.Now()
	// Handlers outlive a cancelled ctx by up to Grace. Their context
	// carries what HandlerContext puts there, as jobtest's harness does.
	base, hardStop := context.WithCancelCause(context.WithoutCancel(HandlerContext(ctx, w.e, w.r)))
	defer hardStop(ErrWorkerStopping)
	side, stopSide := context.WithCancel(base)
	select { // the notes' subscription is up, or failed (worker_notify.go)
	case <-w.e.notifier.Join(w.notes, w.log):
	case <-ctx.Done():
	}
	defer w.e.notifier.Leave(w.notes) // before Run returns: no call of it in flight then
	var sideWG sync.WaitGroup
	sideWG.Add(7)
	go func() { defer sideWG.Done(); w.heartbeat(side) }()
	go func() { defer sideWG.Done(); w.noteLoop(side, restarted) }()
	go func() { defer sideWG.Done(); w.monitorLoop(side, base, start) }()
	go func() { defer sideWG.Done(); w.sweeper(side) }()
	go func() { defer sideWG.Done(); w.watch(ctx, side, restarted) }()
	go func() { defer sideWG.Done(); w.acker(base) }()
	go func() { defer sideWG.Done(); w.pruneCompletions(side) }() // complete_tx.go
	starterDone := make(chan struct{})
	if w.starts != nil {
		go func() { defer close(starterDone); w.starter(base) }()
	}

	w.log.Debug("worker starting", "queues", w.cfg.Queues, "concurrency", w.cfg.Concurrency)
	started := make(chan struct{})
	go func() { defer close(started); w.startJobs(base, start) }()
	helped := make(chan struct{})
	if w.helped() {
		go func() { defer close(helped); w.help(ctx) }()
	} else {
		close(helped)
	}
	w.fetch(ctx, base, start)
	<-helped
	close(w.queued)
	<-started
	w.drain()
	w.runners.Close()
	if w.starts != nil {
		close(w.starts)
		<-starterDone
	}
	w.follows.Wait()
	close(w.ackStop)
	<-w.ackDone
	w.follows.Wait()
	stopSide()
	sideWG.Wait()
	w.stopped()
	return nil
}

// stopped reports the end of Run.
func (w *Worker) stopped() {
	w.events.emit(Event{Kind: WorkerStopping, Worker: w.cfg.Name, Reason: w.StopReason()})
	w.log.Info("worker stopped", "reason", w.StopReason(), "processed", w.processed.Load())
}

// watch turns ctx's end and restart broadcasts into stops: a broadcast
// whose mark is later than restarted, the one before the worker started.
// A mark that is gone or earlier is no broadcast (Inspector.RestartWorkers).
func (w *Worker) watch(ctx, side context.Context, restarted int64) {
	t := time.NewTicker(restartPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			w.stop(stopReasonOf(ctx))
			return
		case <-side.Done():
			return
		case <-w.stopCh:
			return
		case <-t.C:
			mark, err := w.e.lastRestart(side)
			if err == nil && mark > restarted {
				w.log.Info("restart broadcast received")
				w.stop("restart broadcast")
				return
			}
		}
	}
}

// restartPoll is how often workers look for a restart broadcast: one
// GET each time. The broadcast's note tells them at once
// (worker_notify.go); the poll is for a worker that missed it.
const restartPoll = 5 * time.Second

// fetch is the main loop: it reserves jobs while there is free capacity
// and starts a goroutine for each, and waits for jobs when there are
// none.
func (w *Worker) fetch(ctx, base context.Context, start time.Time) {
	retry := errBackoff{w: w}
	for !w.stopping() {
		w.events.emit(Event{Kind: Looping, Worker: w.cfg.Name})
		if w.waitWhilePaused() || !w.takeSlot(start) {
			continue
		}
		n := 1 + w.grabSlots(w.batchLimit()-1)
		settled := w.settledCount()
		jobs, next, err := w.reserveUnlessEmptied(ctx, n)
		w.accept(jobs, n)
		switch {
		case err != nil && ctx.Err() != nil:
			continue
		case err != nil:
			retry.after("reserve failed; retrying", err)
			continue
		case len(jobs) > 0:
			retry.reset()
			if len(jobs) == n {
				w.markBusy()
			}
			continue
		}
		retry.reset()
		if w.stopWhenIdle(settled) {
			return
		}
		r := w.idle(base, w.idleFor(next), next.Rated)
		w.accept(r.jobs, r.n)
		w.waited = true
		w.woken(r)
		if err := r.err; err != nil && !w.stopping() {
			retry.after("waiting for jobs failed; retrying", err)
		}
	}
}

// errBackoff spaces the retries of the fetch loop's failed Redis calls:
// 10 ms, doubling up to Sleep. It logs an outage once as it starts, then
// once every outageLogEvery with the failures so far, and once when a
// call works again, with the outage's length: not a line per retry.
type errBackoff struct {
	w     *Worker
	delay time.Duration

	since    time.Time // the first failure of the outage; zero if none
	logged   time.Time // the outage's last line
	failures int
}

// outageLogEvery is how often a Redis outage is logged again while it lasts.
const outageLogEvery = time.Minute

func (b *errBackoff) after(msg string, err error) {
	if b.delay == 0 {
		b.delay = 10 * time.Millisecond
	}
	now := time.Now()
	b.failures++
	switch {
	case b.since.IsZero():
		b.since, b.logged = now, now
		b.w.log.Error(msg+"; logging again once a minute while it fails, and when it works", "err", err, "in", b.delay)
	case now.Sub(b.logged) >= outageLogEvery:
		b.logged = now
		b.w.log.Error("Redis still failing; retrying", "for", now.Sub(b.since).Round(time.Second), "failures", b.failures, "err", err)
	}
	b.w.sleep(b.delay)
	b.delay = min(2*b.delay, b.w.cfg.Sleep)
}

// reset is a call that worked: the end of an outage, if one was on.
func (b *errBackoff) reset() {
	b.delay = 0
	if b.since.IsZero() {
		return
	}
	b.w.log.Info("Redis works again", "after", time.Since(b.since).Round(time.Millisecond), "failures", b.failures)
	b.since, b.failures = time.Time{}, 0
}

// waitWhilePaused waits out a Pause, and says whether it did.
func (w *Worker) waitWhilePaused() bool {
	ch := w.pausedCh()
	if ch == nil {
		return false
	}
	w.emptied = nil
	select {
	case <-ch:
	case <-w.stopCh:
	}
	return true
}

// takeSlot takes a free slot for the next reserve. It says false if the
// worker stops instead: it was stopped, or a limit is reached, checked
// with the slot in hand, just before reserving, so a job that just
// finished counts.
func (w *Worker) takeSlot(start time.Time) bool {
	select {
	case <-w.slots:
	case <-w.stopCh:
		return false
	}
	if reason := w.limitReached(start); reason != "" {
		w.slots <- struct{}{}
		w.stop(reason)
		return false
	}
	return true
}

// reserveUnlessEmptied reserves up to n jobs, unless the reserve behind
// the last wait took the last ready jobs: a reserve now would most likely
// find none, so the worker waits again at once. A job pushed since rang
// the doorbell, and ends the wait with itself.
func (w *Worker) reserveUnlessEmptied(ctx context.Context, n int) ([]Reservation, nextdue.Next, error) {
	if w.emptied != nil {
		next := *w.emptied
		w.emptied = nil
		return nil, next, nil
	}
	return w.reserve(ctx, n)
}

// stopWhenIdle stops a worker with StopWhenEmpty or Once that found
// nothing to do, and says whether it did. A job that ended during the
// reserve may have pushed another (a chain's next link), too late for
// the reserve to see it: settled is the count of finished jobs from
// before the reserve.
func (w *Worker) stopWhenIdle(settled int64) bool {
	switch {
	case w.cfg.StopWhenEmpty && w.running() == 0 && w.stepAcks.Load() == 0 && w.settledCount() == settled:
		w.stop("empty")
	case w.cfg.Once && w.waited && w.running() == 0:
		w.stop("once")
	default:
		return false
	}
	return true
}

// settledCount counts the jobs that have finished, and the steps whose
// ack, with the follow-up of their end, has ended (workflow_ack.go): a
// step's released dependents are pushed after its job finished.
func (w *Worker) settledCount() int64 { return w.processed.Load() + w.stepAcked.Load() }

// idleFor is how long to wait for jobs: Sleep, or less when a delayed
// job falls due or a lease runs out sooner (nextdue.Next.Wait).
func (w *Worker) idleFor(next nextdue.Next) time.Duration {
	wait := next.Wait(w.cfg.Sleep)
	if w.cfg.StopWhenEmpty {
		wait = min(wait, 20*time.Millisecond)
	}
	return wait
}

// woken takes note of the jobs a wait ended with.
func (w *Worker) woken(r idleWait) {
	if len(r.jobs) == 0 {
		return
	}
	// Let startJobs start them before this goroutine sends the next
	// call: the jobs an idle worker was woken for are the ones someone is
	// waiting on.
	gosched()
	if r.reserved && len(r.jobs) == r.n {
		w.markBusy()
	}
	// Its reserve, of the worker's only queue, took fewer jobs than it
	// asked for: it emptied the queue.
	if r.reserved && len(r.jobs) < r.n && len(w.cfg.Queues) == 1 && !w.cfg.Once {
		w.emptied = &r.next
	}
}

// accept hands reserved jobs to startJobs and returns the slots of
// the n taken that the jobs do not use.
func (w *Worker) accept(jobs []Reservation, n int) {
	for range n - len(jobs) {
		w.slots <- struct{}{}
	}
	w.reserved.Add(int64(len(jobs)))
	for _, j := range jobs {
		w.wg.Add(1)
		w.track(j.Ref, func(error) {}, RunningJob{}) // leased while it waits; process tracks it anew
		w.queued <- j
	}
}
