package laravel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime"
)

// WorkerConfig configures a Worker: the options of Laravel's queue:work.
type WorkerConfig struct {
	// Queues in strict priority order (--queue). Default "default".
	Queues []string
	// Concurrency is how many jobs run at once, each popped by its own
	// loop. Default 1, as one Laravel worker process.
	Concurrency int
	// Sleep is the wait after finding every queue empty (--sleep).
	// Default 3s, as Laravel's. A Queue with BlockFor waits on the first
	// queue's notify list instead.
	Sleep time.Duration
	// Tries is the attempts of a job whose payload sets no maxTries
	// (--tries). Default 1, as Laravel's; negative means no limit.
	Tries int
	// Backoff is the delays before retries of a job whose payload sets no
	// backoff (--backoff); the last repeats. Default none. Whole seconds.
	Backoff []time.Duration
	// Timeout limits an attempt of a job whose payload sets no timeout
	// (--timeout). Default 60s. Laravel wants it shorter than
	// retry_after; the Go worker extends the reservations of running
	// jobs, so a longer one is safe while the worker lives.
	Timeout time.Duration
	// MaxJobs stops the worker after this many jobs (--max-jobs).
	MaxJobs int
	// StopWhenEmpty stops each loop when it finds every queue empty
	// (--stop-when-empty).
	StopWhenEmpty bool
	// Name names the worker in logs.
	Name string
	// Grace is how long running jobs may finish after Run's context ends
	// (--grace); then they are cancelled, and their reservations left to
	// retry_after. Default 0: cancelled at once. A queue:restart,
	// MaxJobs or StopWhenEmpty lets them finish whatever Grace is.
	Grace time.Duration
	// Failed is where jobs that fail for good are kept, with their
	// payloads, to list and retry (queue:failed, queue:retry). Required:
	// Laravel's failed_jobs table is in the app's database, which the Go
	// side leaves alone.
	Failed *runtime.FailedStore
	// FailedQueue is the queue of the failed store that failures are kept
	// under; default "laravel". Retry pushes them back there, where a
	// jobgen worker with RegisterRequeue puts them back on their Laravel
	// queue.
	FailedQueue string
	// Logger receives the worker's warnings. Default slog.Default().
	Logger *slog.Logger
}

func (c *WorkerConfig) setDefaults() {
	if len(c.Queues) == 0 {
		c.Queues = []string{"default"}
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Sleep == 0 {
		c.Sleep = 3 * time.Second
	}
	if c.Tries == 0 {
		c.Tries = 1
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.FailedQueue == "" {
		c.FailedQueue = "laravel"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c WorkerConfig) validate() error {
	switch {
	case c.Concurrency < 1:
		return fmt.Errorf("%w: laravel.WorkerConfig.Concurrency (%d) must be at least 1", runtime.ErrInvalid, c.Concurrency)
	case c.Grace < 0:
		return fmt.Errorf("%w: laravel.WorkerConfig.Grace (%v) must not be negative", runtime.ErrInvalid, c.Grace)
	case c.Failed == nil:
		return fmt.Errorf("%w: laravel.WorkerConfig.Failed is required: jobs that fail for good go to a jobgen failed store (engine.Failed())", runtime.ErrInvalid)
	}
	for _, name := range c.Queues {
		if name == "" {
			return fmt.Errorf("%w: laravel.WorkerConfig.Queues has an empty name", runtime.ErrInvalid)
		}
	}
	return runtime.ValidateQueueName(c.FailedQueue)
}

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
			w.stopFor("queue:restart")
			w.log.Info("queue:restart signalled; stopping")
			stop()
			return
		}
	}
}

// loop takes jobs while ctx lasts and runs each under jobs.
func (w *Worker) loop(ctx, jobs context.Context, stop func()) {
	for ctx.Err() == nil {
		r, err := w.next(ctx)
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
func (w *Worker) next(ctx context.Context) (*Reserved, error) {
	for _, q := range w.cfg.Queues {
		r, err := w.q.Pop(ctx, q)
		if r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// errLeaseLost cancels a job whose reservation another worker took.
var errLeaseLost = errors.New("laravel: reservation lost (retry_after ran out)")

// abandonAfter is how long a handler may ignore its cancelled context.
const abandonAfter = 2 * time.Second

// process runs one popped job and settles it.
func (w *Worker) process(ctx context.Context, r *Reserved) {
	// Settling uses a context that outlives a stop, so a finished job
	// is deleted even while the worker stops.
	settle := context.WithoutCancel(ctx)
	if r.DecodeErr != nil {
		w.fail(settle, r, nil, fmt.Errorf("%w: %w", runtime.ErrDecode, r.DecodeErr))
		return
	}
	p := r.Payload
	mp, err := w.m.forPayload(p)
	if err != nil {
		w.fail(settle, r, nil, err)
		return
	}
	maxTries := int64(w.cfg.Tries)
	if p.MaxTries != nil {
		maxTries = *p.MaxTries
	}
	now := time.Now().Unix()
	// markJobAsFailedIfAlreadyExceedsMaxAttempts: an earlier attempt
	// did not finish (its worker died or timed out).
	switch {
	case p.RetryUntil != nil && now > *p.RetryUntil:
		w.fail(settle, r, mp, fmt.Errorf("%w: %s has been attempted too many times or run too long (retryUntil passed)", runtime.ErrRetryUntil, p.DisplayName))
		return
	case p.RetryUntil == nil && maxTries > 0 && p.Attempts > maxTries:
		w.fail(settle, r, mp, fmt.Errorf("%w: %s has been attempted too many times (%d of %d) or run too long", runtime.ErrMaxAttempts, p.DisplayName, p.Attempts, maxTries))
		return
	}
	body, err := mp.body(p)
	if err != nil {
		w.fail(settle, r, mp, fmt.Errorf("%w: %w", runtime.ErrDecode, err))
		return
	}
	var ch *chain
	if cmd, ok := p.Command(); ok {
		if ch, err = w.m.chainOf(cmd.Command); err != nil {
			w.fail(settle, r, mp, fmt.Errorf("%w: %w", runtime.ErrDecode, err))
			return
		}
	}
	timeout := w.cfg.Timeout
	if p.Timeout != nil && *p.Timeout > 0 {
		timeout = time.Duration(*p.Timeout) * time.Second
	}
	env := &runtime.Envelope{ID: p.UUID, Name: mp.name, Queue: r.Queue, Body: body}
	info := runtime.JobInfo{ID: p.UUID, Name: mp.name, Queue: r.Queue, Attempt: int(p.Attempts)}

	jobCtx, cancel := context.WithCancelCause(runtime.WithJobInfo(ctx, info))
	defer cancel(nil)
	jobCtx, cancelTimeout := context.WithTimeoutCause(jobCtx, timeout, runtime.ErrTimeout)
	defer cancelTimeout()
	heartbeatDone := w.heartbeat(jobCtx, r, cancel)
	w.emit(runtime.JobProcessing, r, mp.name, nil)
	began := time.Now()
	herr := w.attempt(jobCtx, env)
	took := time.Since(began)
	cause := context.Cause(jobCtx)
	cancel(nil)
	<-heartbeatDone

	if errors.Is(cause, errLeaseLost) {
		w.log.Warn("job's reservation was lost while it ran; its result is dropped", "queue", r.Queue, "job", p.DisplayName, "uuid", p.UUID)
		return
	}
	if ctx.Err() != nil && herr != nil {
		// Stopped mid-job: leave the reservation to retry_after, as a
		// Laravel worker that is killed does.
		return
	}
	if delay, ok := runtime.AsRelease(herr); ok {
		if w.settle(r, w.q.Release(settle, r, delay)) {
			w.emit(runtime.JobReleased, r, mp.name, func(e *runtime.Event) { e.Delay, e.Duration = delay, took })
		}
		return
	}
	if reason, ok := runtime.AsFail(herr); ok {
		w.fail(settle, r, mp, reason)
		return
	}
	if herr == nil || runtime.IsDelete(herr) {
		// As Laravel's CallQueuedHandler: the chain's next job is
		// pushed, then this one deleted (a job that deleted itself
		// continues its chain too).
		if ch != nil {
			if err := ch.dispatchNext(settle, w.q); err != nil {
				w.log.Error("dispatch the next job of the chain; the job stays reserved until retry_after", "queue", r.Queue, "job", p.DisplayName, "err", err)
				return
			}
		}
		if w.settle(r, w.q.Delete(settle, r)) {
			w.emit(runtime.JobProcessed, r, mp.name, func(e *runtime.Event) { e.Duration = took })
		}
		return
	}
	if errors.Is(herr, runtime.ErrDecode) {
		w.fail(settle, r, mp, herr)
		return
	}
	if errors.Is(cause, runtime.ErrTimeout) {
		err := fmt.Errorf("%w: %s has timed out after %v: %w", runtime.ErrTimeout, p.DisplayName, timeout, herr)
		w.emit(runtime.JobTimedOut, r, mp.name, func(e *runtime.Event) { e.Err, e.Duration = err, took })
		if p.FailOnTimeout {
			w.fail(settle, r, mp, err)
			return
		}
		w.exception(settle, r, mp, maxTries, err, false)
		return
	}
	w.emit(runtime.JobExceptionOccurred, r, mp.name, func(e *runtime.Event) { e.Err, e.Duration = herr, took })
	w.exception(settle, r, mp, maxTries, herr, true)
}

// exception is Laravel's handleJobException: fail the job if this was
// its last try, its retryUntil passed, or it reached maxExceptions;
// else release it after its backoff.
func (w *Worker) exception(ctx context.Context, r *Reserved, mp *mapping, maxTries int64, err error, counts bool) {
	p := r.Payload
	now := time.Now().Unix()
	switch {
	case p.RetryUntil != nil && *p.RetryUntil <= now:
		w.fail(ctx, r, mp, fmt.Errorf("%w: %w", runtime.ErrRetryUntil, err))
		return
	case p.RetryUntil == nil && maxTries > 0 && p.Attempts >= maxTries:
		w.fail(ctx, r, mp, fmt.Errorf("%w (%d of %d): %w", runtime.ErrMaxAttempts, p.Attempts, maxTries, err))
		return
	}
	if counts && p.MaxExceptions != nil && *p.MaxExceptions > 0 {
		n, cerr := w.countException(ctx, p.UUID)
		if cerr != nil {
			w.log.Warn("count exception", "err", cerr)
		} else if n >= *p.MaxExceptions {
			w.fail(ctx, r, mp, fmt.Errorf("%w (%d): %w", runtime.ErrMaxExceptions, n, err))
			return
		}
	}
	delay := w.backoff(p)
	if w.settle(r, w.q.Release(ctx, r, delay)) {
		w.emit(runtime.JobReleased, r, mp.name, func(e *runtime.Event) { e.Delay, e.Err = delay, err })
	}
}

// countException adds one to the job's exceptions, where Laravel's worker
// counts them: the cache key job-exceptions:UUID, for a day.
func (w *Worker) countException(ctx context.Context, uuid string) (int64, error) {
	key := w.q.cfg.CachePrefix + "job-exceptions:" + uuid
	if w.q.cfg.CachePrefix == "" {
		key = w.q.cfg.Prefix + "jobgen:job-exceptions:" + uuid
	}
	var incr *redis.IntCmd
	_, err := w.q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, key)
		p.Expire(ctx, key, 24*time.Hour)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return incr.Val(), nil
}

// backoff is Laravel's calculateBackoff: the job's backoff (else the
// worker's) at the attempt just made, the last repeating.
func (w *Worker) backoff(p Payload) time.Duration {
	list := p.BackoffDelays()
	if list == nil {
		list = w.cfg.Backoff
	}
	if len(list) == 0 {
		return 0
	}
	i := int(p.Attempts) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(list) {
		i = len(list) - 1
	}
	return list[i]
}

// settle logs what went wrong with a delete or release, and reports
// whether it was done.
func (w *Worker) settle(r *Reserved, err error) bool {
	if errors.Is(err, ErrNotReserved) {
		w.log.Warn("job's reservation was gone when it finished (retry_after ran out); it may run again", "queue", r.Queue, "job", r.Payload.DisplayName, "uuid", r.Payload.UUID)
	} else if err != nil {
		w.log.Error("settle job", "queue", r.Queue, "uuid", r.Payload.UUID, "err", err)
	}
	return err == nil
}

// heartbeat extends the reservation every third of retry_after until
// ctx ends; a lost reservation cancels the job.
func (w *Worker) heartbeat(ctx context.Context, r *Reserved, cancel context.CancelCauseFunc) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := w.q.cfg.RetryAfter / 3
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := w.q.Extend(ctx, r, w.q.cfg.RetryAfter)
			if errors.Is(err, ErrNotReserved) {
				cancel(errLeaseLost)
				return
			}
		}
	}()
	return done
}

// attempt runs the handler; a panic is an exception, and a handler that
// ignores its cancelled context is abandoned abandonAfter later.
func (w *Worker) attempt(ctx context.Context, env *runtime.Envelope) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- &runtime.PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		done <- w.r.Run(ctx, env)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(abandonAfter)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("handler abandoned %v after its context ended: %w", abandonAfter, context.Cause(ctx))
	}
}

// fail moves the job to the failed store, with its payload as popped,
// deletes it from the Laravel queue, then runs its failed hook.
func (w *Worker) fail(ctx context.Context, r *Reserved, mp *mapping, cause error) {
	name := "laravel job"
	if r.Payload.DisplayName != "" {
		name = r.Payload.DisplayName
	}
	env, err := requeueEnvelope(w.cfg.FailedQueue, r, name)
	if err == nil {
		_, err = w.cfg.Failed.Record(ctx, env, cause, int(r.Payload.Attempts))
	}
	if err != nil {
		// Not deleted: the job comes back after retry_after.
		w.log.Error("record failed job; it stays reserved until retry_after", "queue", r.Queue, "job", name, "err", err)
		return
	}
	w.settle(r, w.q.Delete(ctx, r))
	w.log.Warn("job failed", "queue", r.Queue, "job", name, "uuid", r.Payload.UUID, "attempts", r.Payload.Attempts, "err", cause)
	mapped := ""
	if mp != nil {
		mapped = mp.name
	}
	w.emit(runtime.JobFailed, r, mapped, func(e *runtime.Event) { e.Err = cause })
	if mp != nil {
		if body, err := mp.body(r.Payload); err == nil {
			w.r.RunFailed(ctx, &runtime.Envelope{ID: r.Payload.UUID, Name: mp.name, Queue: r.Queue, Body: body}, cause)
		}
	}
}

// failedID is the failed store's ID for a Laravel job: its uuid, or for a
// payload without one, its RedisQueue id.
func failedID(r *Reserved) string {
	switch {
	case r.Payload.UUID != "":
		return r.Payload.UUID
	case r.Payload.ID != "":
		return r.Payload.ID
	}
	return runtime.NewID()
}
