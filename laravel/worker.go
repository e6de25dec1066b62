package laravel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime"
)

// Worker runs the jobs of Laravel queues with Go handlers: it pops a
// payload as Laravel's worker does, decodes it into the Go type its PHP
// class is mapped to (Mapper), runs the handler registered for that type
// on a runtime.Router, and deletes, releases or fails the job with
// Laravel's rules for tries, backoff, retryUntil, maxExceptions,
// timeout and failOnTimeout.
//
// While a job runs, the worker pushes its reservation forward every
// third of retry_after, so a job longer than retry_after is not run
// twice; this guards against a slow job, not a network partition: a
// Laravel reservation has no token, and a worker cut off from Redis
// for longer than retry_after may still finish a job another worker
// has taken (its result is then dropped: delete and release find
// nothing).
type Worker struct {
	q   *Queue
	m   *Mapper
	r   *runtime.Router
	cfg WorkerConfig
	log *slog.Logger

	processed sync.Mutex
	jobs      int
	// restartMark is Laravel's queue:restart mark when the worker was
	// made; a later one stops it.
	restartMark int64

	subMu sync.RWMutex
	subs  []func(runtime.Event)
	// failing holds the queues whose last pop failed, each reported once
	// until a pop from it works again.
	failing map[string]bool
	// popErrors counts, per queue, the pops that failed.
	popErrors map[string]int64
	// unmapped counts, per class, the pops that found a job of a class no
	// Go type is mapped to first, and left it for a PHP worker.
	unmapped map[string]int64
	// left counts, per class and reason, the pops that found first a job
	// of a mapped class that only Laravel's worker can finish, and left
	// it for a PHP worker.
	left map[string]int64
	mu   sync.Mutex // failing, popErrors, unmapped, left
	// reason is why the worker stops, set once.
	reasonOnce sync.Once
	reason     string
}

// Subscribe calls fn with each of the worker's events, named after
// Laravel's (runtime.JobProcessing, JobProcessed, JobExceptionOccurred,
// JobTimedOut, JobReleased, JobFailed, WorkerStopping). An outcome's
// event comes once Redis accepted the delete, release or failure that
// records it. fn is called from the worker's goroutines: it must be
// quick and safe for concurrent use.
func (w *Worker) Subscribe(fn func(runtime.Event)) {
	w.subMu.Lock()
	w.subs = append(w.subs, fn)
	w.subMu.Unlock()
}

func (w *Worker) emit(kind runtime.EventKind, r *Reserved, name string, set func(*runtime.Event)) {
	w.subMu.RLock()
	subs := w.subs
	w.subMu.RUnlock()
	if len(subs) == 0 {
		return
	}
	if name == "" {
		name = r.Payload.DisplayName
	}
	ev := runtime.Event{Kind: kind, Worker: w.cfg.Name, Queue: r.Queue, Name: name, ID: r.Payload.UUID, Attempt: int(r.Payload.Attempts)}
	if set != nil {
		set(&ev)
	}
	for _, fn := range subs {
		fn(ev)
	}
}

func (w *Worker) stopFor(reason string) {
	w.reasonOnce.Do(func() { w.reason = reason })
}

// NewWorker returns a worker for the queues of q, running the jobs m
// maps with the handlers of r. With Config.CachePrefix set it reads
// Laravel's queue:restart mark now: a restart signalled after NewWorker
// returns stops the worker.
func NewWorker(q *Queue, m *Mapper, r *runtime.Router, cfg WorkerConfig) (*Worker, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := errors.Join(m.Err(), r.Err()); err != nil {
		return nil, err
	}
	for _, c := range m.Classes() {
		m.mu.RLock()
		mp := m.byClass[c]
		m.mu.RUnlock()
		if !slices.Contains(r.Names(), mp.name) {
			return nil, fmt.Errorf("%w: laravel: PHP job %s maps to %s, which the router has no handler for", runtime.ErrInvalid, c, mp.name)
		}
	}
	mark, _, err := q.RestartMark(context.Background())
	if err != nil {
		return nil, err
	}
	return &Worker{q: q, m: m, r: r, cfg: cfg, log: cfg.Logger.With("worker", cfg.Name), restartMark: mark}, nil
}

// Run processes jobs until ctx is done, a queue:restart is signalled
// after NewWorker (Config.CachePrefix), MaxJobs are done, or with
// StopWhenEmpty the queues are empty. At a restart, MaxJobs or an empty
// queue it takes no new job and lets the running ones finish, as
// Laravel's worker does. When ctx ends, running jobs get Grace to
// finish, then their contexts are cancelled and their reservations left
// to retry_after, as when a Laravel worker is killed. Run returns nil
// for every stop, once no job runs.
func (w *Worker) Run(ctx context.Context) error {
	// takeCtx ends the taking of jobs; jobsCtx the running jobs.
	takeCtx, quit := context.WithCancel(ctx)
	defer quit()
	jobsCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	go func() {
		select {
		case <-ctx.Done():
			w.stopFor("context done")
		case <-jobsCtx.Done():
			return
		}
		if w.cfg.Grace > 0 {
			t := time.NewTimer(w.cfg.Grace)
			defer t.Stop()
			select {
			case <-t.C:
			case <-jobsCtx.Done():
				return
			}
		}
		cancelJobs()
	}()
	w.checkPrefix(ctx)
	if w.q.cfg.CachePrefix != "" {
		go w.watchRestart(takeCtx, quit, w.restartMark)
	}
	var wg sync.WaitGroup
	for range w.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(takeCtx, jobsCtx, quit)
		}()
	}
	wg.Wait()
	w.stopFor("stopped")
	w.subMu.RLock()
	subs := w.subs
	w.subMu.RUnlock()
	for _, fn := range subs {
		fn(runtime.Event{Kind: runtime.WorkerStopping, Worker: w.cfg.Name, Reason: w.reason})
	}
	return nil
}

// watchRestart stops the worker when Laravel's queue:restart mark
// changes, looking every second.
func (w *Worker) watchRestart(ctx context.Context, stop func(), start int64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		mark, ok, err := w.q.RestartMark(ctx)
		if err == nil && ok && mark != start {
			// Stop taking jobs first, then say so: a job that finishes
			// meanwhile must find the worker stopping, not take another.
			w.stopFor("queue:restart")
			stop()
			w.log.Info("queue:restart signalled; stopping")
			return
		}
	}
}

// loop takes jobs while ctx lasts and runs each under jobs.
func (w *Worker) loop(ctx, jobs context.Context, stop func()) {
	for ctx.Err() == nil {
		r, err := w.next(ctx)
		if errors.Is(err, errLeftForPHP) {
			// Nothing this worker can run is first: with StopWhenEmpty it
			// is done, as on an empty queue; else it looks again soon.
			if w.cfg.StopWhenEmpty {
				w.stopFor("empty")
				return
			}
			sleep(ctx, min(w.cfg.Sleep, UnmappedPoll))
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("pop failed", "err", err)
				sleep(ctx, w.cfg.Sleep)
			}
			continue
		}
		if r == nil {
			if w.cfg.StopWhenEmpty {
				w.stopFor("empty")
				return
			}
			if w.q.cfg.BlockFor == 0 {
				sleep(ctx, w.cfg.Sleep)
			}
			continue
		}
		w.process(jobs, r)
		if w.cfg.MaxJobs > 0 {
			w.processed.Lock()
			w.jobs++
			done := w.jobs >= w.cfg.MaxJobs
			w.processed.Unlock()
			if done {
				w.stopFor("max jobs")
				stop()
			}
		}
	}
}

// next pops from the queues in priority order.
//
// A queue whose pop fails does not keep the queues after it from being
// served, as in Laravel's worker: its error is logged when it starts
// failing and its recovery when a pop from it works again, and next
// returns an error only when every queue's pop failed.
func (w *Worker) next(ctx context.Context) (*Reserved, error) {
	var errs []error
	left := false
	paused := w.pausedQueues(ctx) // pause.go
	for _, q := range w.cfg.Queues {
		if paused[q] {
			continue
		}
		var take func(job []byte) bool // every job, with FailUnmapped
		if !w.cfg.FailUnmapped {
			take = func(job []byte) bool { return w.takes(q, job) }
		}
		r, l, err := w.q.popWhere(ctx, q, take)
		w.popped(q, err)
		if err != nil {
			errs = append(errs, fmt.Errorf("queue %s: %w", q, err))
			continue
		}
		if r != nil {
			return r, nil
		}
		left = left || l
	}
	if len(errs) == len(w.cfg.Queues) {
		return nil, errors.Join(errs...)
	}
	if left {
		return nil, errLeftForPHP
	}
	return nil, nil
}

// errLeftForPHP says that a queue's first job is left for a PHP worker:
// the loop looks again after UnmappedPoll, and does not count the queues
// as empty.
var errLeftForPHP = errors.New("laravel: the first job is left for a PHP worker")

// UnmappedPoll is how soon a worker looks again at a queue whose first
// job it left for a PHP worker.
const UnmappedPoll = 250 * time.Millisecond

// takes says whether the worker reserves job, first on queue: not a job
// that is PHP's to run (Mapper.phpOnly), of a class no Go type is mapped
// to, or that only Laravel's worker can finish (a chain with catch
// callbacks or a link Go cannot continue, a batch). Such a job is left
// for a PHP worker; the worker logs each class and reason the first time
// and counts each time. A payload that is not a job is taken, to be
// failed.
func (w *Worker) takes(queue string, job []byte) bool {
	err := w.m.phpOnly(job)
	if err == nil {
		return true
	}
	var po *phpOnlyError
	if !errors.As(err, &po) {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if po.kind == kindUnmapped {
		if w.unmapped == nil {
			w.unmapped = map[string]int64{}
		}
		if w.unmapped[po.class] == 0 {
			w.log.Info("job of a class no Go type is mapped to; left on its queue for a PHP worker (WorkerConfig.FailUnmapped fails such jobs instead)", "queue", queue, "class", po.class)
		}
		w.unmapped[po.class]++
		return false
	}
	if w.left == nil {
		w.left = map[string]int64{}
	}
	key := po.class + " (" + po.kind + ")"
	if w.left[key] == 0 {
		w.log.Info("job that only Laravel's worker can finish; left on its queue for a PHP worker (WorkerConfig.FailUnmapped fails such jobs instead)", "queue", queue, "class", po.class, "why", po.msg)
	}
	w.left[key]++
	return false
}

// Unmapped returns, per PHP class that no Go type is mapped to, how many
// times a pop of this worker found a job of it first and left it for a
// PHP worker.
func (w *Worker) Unmapped() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.unmapped)
}

// LeftForPHP returns how many times a pop of this worker found first a
// job of a mapped class that only Laravel's worker can finish, and left
// it for a PHP worker, per class and reason: "App\Jobs\X (chain with
// catch callbacks)", "(chain Go cannot continue)" or "(batch)".
func (w *Worker) LeftForPHP() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.left)
}

// PopErrors returns, per queue, how many of this worker's pops from it
// failed (a key of another type, Redis out of reach): the queue is
// skipped meanwhile, and the others served.
func (w *Worker) PopErrors() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.popErrors)
}

// popped reports a queue whose pop starts failing, or works again, and
// counts the failures.
func (w *Worker) popped(queue string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && !errors.Is(err, context.Canceled) {
		if w.popErrors == nil {
			w.popErrors = map[string]int64{}
		}
		w.popErrors[queue]++
	}
	switch {
	case err != nil && !w.failing[queue] && !errors.Is(err, context.Canceled):
		if w.failing == nil {
			w.failing = map[string]bool{}
		}
		w.failing[queue] = true
		w.log.Error("pop failed; serving the worker's other queues meanwhile", "queue", queue, "err", err)
	case err == nil && w.failing[queue]:
		delete(w.failing, queue)
		w.log.Info("pop works again", "queue", queue)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// checkPrefix warns, once at start, when none of the worker's queues has
// a key under the connection's prefix while another prefix holds one of
// them: a wrong prefix leaves a worker waiting forever, with nothing to
// say so otherwise (laravel:doctor checks it too). Single servers only.
func (w *Worker) checkPrefix(ctx context.Context) {
	c, ok := w.q.rdb.(*redis.Client)
	if !ok {
		return
	}
	var keys []string
	for _, q := range w.cfg.Queues {
		k := w.q.keys(q)
		keys = append(keys, k.Ready, k.Delayed, k.Reserved)
	}
	if n, err := c.Exists(ctx, keys...).Result(); err != nil || n > 0 {
		return
	}
	for _, q := range w.cfg.Queues {
		iter := c.Scan(ctx, 0, "*queues:"+q, 1000).Iterator()
		for i := 0; i < 50 && iter.Next(ctx); i++ {
			if other := strings.TrimSuffix(iter.Val(), "queues:"+q); other != w.q.cfg.Prefix {
				w.log.Warn("none of the worker's queues has a job under the connection's prefix, while another prefix holds one: is the prefix right? (laravel:doctor checks a setup)",
					"prefix", w.q.cfg.Prefix, "found", iter.Val())
				return
			}
		}
	}
}
