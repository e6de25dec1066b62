package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// PendingChain is a chain of jobs to dispatch: each runs only after the
// one before it succeeded (Laravel's Bus::chain). Build one with Chain;
// its setters return it, so they chain.
//
//	runtime.Chain(Fetch{URL: u}, Parse{}, Store{}.OnQueue("db")).
//		OnQueue("imports").
//		Catch(importFailed.With(u)).
//		Dispatch(ctx)
//
// A link with a delay, its own (Job{}.Delay(d)) or its annotation's, is
// pushed delayed by it once the link before it succeeds, as Laravel does;
// the chain's first job waits for its delay from dispatch, as any job.
//
// Each link keeps the ID it is given at dispatch, and is pushed, once,
// by the worker that finishes the link before it: a link that runs
// again (its worker died before acking it) does not push its successor a
// second time, and a link whose successor was pushed already is not run
// again at all.
type PendingChain struct {
	jobs       []Job
	queue      string
	connection string
	catch      *CallbackRef
}

// Chain starts a chain of jobs. A job may be a *PendingDispatch (such as
// Job{}.OnQueue(q)) to override the queue or connection of that link.
func Chain(jobs ...Job) *PendingChain { return &PendingChain{jobs: jobs} }

// OnQueue sends every link that does not name its own queue to q.
func (c *PendingChain) OnQueue(q string) *PendingChain {
	c.queue = q
	return c
}

// OnConnection sends every link that does not name its own connection
// through the dispatcher named name.
func (c *PendingChain) OnConnection(name string) *PendingChain {
	c.connection = name
	return c
}

// Catch sets the callback that runs when a link fails for good; the
// links after it are dropped. The callback must be registered with
// RegisterCallback on the workers' routers.
func (c *PendingChain) Catch(cb CallbackRef) *PendingChain {
	c.catch = &cb
	return c
}

// Jobs returns the chain's jobs.
func (c *PendingChain) Jobs() []Job { return c.jobs }

// Dispatch sends the first job, carrying the rest, and returns its ID.
func (c *PendingChain) Dispatch(ctx context.Context) (string, error) {
	p, err := c.pending()
	if err != nil {
		return "", err
	}
	return p.Dispatch(ctx)
}

// pending turns the chain into a dispatch of its first job.
func (c *PendingChain) pending() (*PendingDispatch, error) {
	if len(c.jobs) == 0 {
		return nil, fmt.Errorf("%w: chain has no jobs", ErrInvalid)
	}
	p := asPending(c.jobs[0])
	if len(p.chain) > 0 {
		return nil, fmt.Errorf("%w: chain: job %s carries a chain of its own", ErrInvalid, p.JobName())
	}
	p.chain = append([]Job(nil), c.jobs[1:]...)
	p.chainQueue, p.chainConnection, p.catch = c.queue, c.connection, c.catch
	return p, nil
}

// A *PendingChain is a Job standing for its first job, so that a chain
// can be one job of a batch: runtime.NewBatch(a, runtime.Chain(b, c)).
// runtime.Dispatch dispatches it as a chain. Anywhere else (a link of a
// chain, the job of a PendingDispatch) it is refused with ErrInvalid,
// rather than sent as its first job alone.

// JobName returns the wire name of the chain's first job.
func (c *PendingChain) JobName() string {
	if len(c.jobs) == 0 {
		return ""
	}
	return c.jobs[0].JobName()
}

// JobOptions returns the options of the chain's first job.
func (c *PendingChain) JobOptions() JobOptions {
	if len(c.jobs) == 0 {
		return JobOptions{}
	}
	return c.jobs[0].JobOptions()
}

// EncodeJob encodes the chain's first job.
func (c *PendingChain) EncodeJob() ([]byte, error) {
	if len(c.jobs) == 0 {
		return nil, fmt.Errorf("%w: chain has no jobs", ErrInvalid)
	}
	return c.jobs[0].EncodeJob()
}

// Catch sets the callback that runs when the job or a link of its chain
// fails for good, as PendingChain.Catch does.
func (p *PendingDispatch) Catch(cb CallbackRef) *PendingDispatch {
	p.catch = &cb
	return p
}

// A *PendingDispatch is itself a Job, whose options carry its overrides,
// so that it can be a link of a chain or a job of a batch.

// JobName returns the wire name of the job being dispatched.
func (p *PendingDispatch) JobName() string { return p.job.JobName() }

// JobOptions returns the job's options with this dispatch's queue,
// connection, delay and debounce window and max wait in place of the
// annotated ones.
func (p *PendingDispatch) JobOptions() JobOptions {
	o := p.job.JobOptions()
	if p.deb != nil {
		p.deb.apply(&o) // debounce.go
	}
	if p.queue != "" {
		o.Queue = p.queue
	}
	if p.connection != "" {
		o.Connection = p.connection
	}
	if p.delaySet {
		o.Delay = p.delay
	}
	return o
}

// EncodeJob encodes the job being dispatched.
func (p *PendingDispatch) EncodeJob() ([]byte, error) { return p.job.EncodeJob() }

// asPending returns a copy of j if it is a *PendingDispatch, so that
// building a chain or batch never changes the caller's value, or a new
// dispatch of j.
func asPending(j Job) *PendingDispatch {
	if p, ok := j.(*PendingDispatch); ok {
		c := *p
		c.chain = append([]Job(nil), p.chain...)
		return &c
	}
	return NewPendingDispatch(j)
}

// underlying returns the job a *PendingDispatch wraps, however deep.
func underlying(j Job) Job {
	for {
		p, ok := j.(*PendingDispatch)
		if !ok {
			return j
		}
		j = p.job
	}
}

// LinkQueue returns the queue and connection ("" for the default) that
// the link Chain()[i] is pushed to: its own (OnQueue, OnConnection), else
// the chain's, else its annotation's, else the default queue. These are
// the ones the engine encodes into the link. It panics if i is out of
// range, as Chain()[i] does.
func (p *PendingDispatch) LinkQueue(i int) (queue, connection string) {
	return p.linkTarget(asPending(p.chain[i]))
}

// linkTarget returns the queue and connection of lp, a link of p's
// chain. The chain's queue and connection take the place of the link's
// annotated ones, but not of those the link was given itself.
func (p *PendingDispatch) linkTarget(lp *PendingDispatch) (queue, connection string) {
	queue, connection = p.chainQueue, p.chainConnection
	if lp.queue != "" || queue == "" {
		queue = lp.Queue()
	}
	if lp.connection != "" || connection == "" {
		connection = lp.Connection()
	}
	return queue, connection
}

// encodeChain encodes p's chain into env: each link gets its ID now, its
// queue and connection (its own, else the chain's, else its annotation's),
// its delay (its own, else its annotation's), the chain's catch callback
// and batch, and is sealed if encrypted.
func (p *PendingDispatch) encodeChain(env *Envelope, seal func(*Envelope) error) error {
	if p.catch != nil {
		b, err := p.catch.encode()
		if err != nil {
			return fmt.Errorf("chain of %s: %w", p.job.JobName(), err)
		}
		env.Catch = b
	}
	for i, j := range p.chain {
		lp := asPending(j)
		if len(lp.chain) > 0 {
			return fmt.Errorf("%w: chain of %s: link %d (%s) carries a chain of its own", ErrInvalid, p.job.JobName(), i+1, lp.JobName())
		}
		// A link after the first is pushed by the worker that ran the
		// one before it, in the script that marks it pushed: it takes no
		// lock and joins no burst, so a job that wants either is refused.
		if lp.JobOptions().UniqueFor > 0 {
			return fmt.Errorf("%w: chain of %s: link %d (%s) is unique (unique_for): a chain's links after the first take no unique lock; make it the chain's first job, or dispatch it on its own", ErrInvalid, p.job.JobName(), i+1, lp.JobName())
		}
		if !lp.at.IsZero() {
			return fmt.Errorf("%w: chain of %s: link %d (%s) has At(t): a chain's links after the first are pushed when the one before succeeds, each with a delay from then; give it a Delay, or dispatch it on its own", ErrInvalid, p.job.JobName(), i+1, lp.JobName())
		}
		if lp.debounced() {
			return fmt.Errorf("%w: chain of %s: link %d (%s) is debounced: a chain's links after the first are pushed each on its own, not debounced; dispatch it on its own", ErrInvalid, p.job.JobName(), i+1, lp.JobName())
		}
		queue, conn := p.linkTarget(lp)
		if err := ValidateQueueName(queue); err != nil {
			return fmt.Errorf("chain of %s: link %d (%s): %w", p.job.JobName(), i+1, lp.JobName(), err)
		}
		delay := lp.DelayDuration()
		// Made at the chain's dispatch, whenever the link is pushed.
		link, err := newEnvelope(lp.job, queue, conn, time.UnixMilli(env.DispatchedAt))
		if err != nil {
			return fmt.Errorf("chain of %s: %w", p.job.JobName(), err)
		}
		link.Catch, link.BatchID = env.Catch, env.BatchID
		if seal != nil {
			if err := seal(link); err != nil {
				return fmt.Errorf("chain of %s: %w", p.job.JobName(), err)
			}
		}
		b, err := link.Encode()
		if err != nil {
			return err
		}
		env.Chain = append(env.Chain, encodeLink(b, delay))
	}
	return nil
}

// linkDelayed starts a chain entry whose link has a delay: the delay in
// ms follows as a uvarint, then the link's encoded envelope. No msgpack
// value starts with this byte, so an entry without a delay is the
// envelope alone, as entries were before links had delays.
const linkDelayed = 0xc1

// encodeLink returns the chain entry of a link's encoded envelope.
func encodeLink(payload []byte, delay time.Duration) []byte {
	ms := delayMillis(delay)
	if ms <= 0 {
		return payload
	}
	b := binary.AppendUvarint([]byte{linkDelayed}, uint64(ms))
	return append(b, payload...)
}

// decodeLink splits a chain entry into the link's encoded envelope and
// its delay.
func decodeLink(entry []byte) ([]byte, time.Duration, error) {
	if len(entry) == 0 || entry[0] != linkDelayed {
		return entry, 0, nil
	}
	ms, n := binary.Uvarint(entry[1:])
	if n <= 0 || ms > uint64(time.Duration(1<<63-1)/time.Millisecond) {
		return nil, 0, errors.New("bad delay")
	}
	return entry[1+n:], time.Duration(ms) * time.Millisecond, nil
}

// nextLink decodes the first link of env's chain, carrying the rest, and
// returns the delay to push it with.
func nextLink(env *Envelope) (*Envelope, time.Duration, error) {
	payload, delay, err := decodeLink(env.Chain[0])
	var next *Envelope
	if err == nil {
		next, err = decodeLinkEnvelope(payload)
	}
	if err != nil {
		return nil, 0, &DecodeError{ID: env.ID, Err: fmt.Errorf("next job of its chain: %w", err)}
	}
	next.Chain = env.Chain[1:]
	return next, delay, nil
}

// chains is the worker's step for chains (worker_steps.go): a link that
// finished before is not run again, a success pushes the next link, and
// a failure runs the chain's catch.
type chains struct{ busEnv }

func (s chains) before(ctx context.Context, res Reservation, env *Envelope) bool {
	done, err := s.done(ctx, res, env)
	if err != nil {
		s.log.Warn("could not tell whether a chain link ran before; running it", "job", env.Name, "id", env.ID, "err", err)
	}
	if done {
		s.log.Info("chain link finished before its worker died; acking it without running it again", "job", env.Name, "id", env.ID)
	}
	return done
}
func (s chains) succeeded(ctx context.Context, _ Reservation, env *Envelope, _ *Finish) error {
	return s.dispatchNext(ctx, env)
}
func (s chains) failed(ctx context.Context, env *Envelope, cause error) { s.runCatch(ctx, env, cause) }
func (chains) ended(context.Context, *Envelope)                         {}
func (chains) hasFailWork(env *Envelope) bool                           { return len(env.Catch) > 0 }

// linkEngine returns the engine that next goes to: the worker's own for
// the same connection, else the dispatcher named for the connection,
// which must be an *Engine.
func (s chains) linkEngine(ctx context.Context, env, next *Envelope) (*Engine, error) {
	if next.Connection == env.Connection {
		return s.e, nil
	}
	d, err := DispatcherFor(ctx, next.Connection)
	if err != nil {
		return nil, err
	}
	e, ok := d.(*Engine)
	if !ok {
		return nil, fmt.Errorf("%w: the dispatcher for connection %q is a %T; a chain link can only be pushed to an *Engine", ErrInvalid, next.Connection, d)
	}
	return e, nil
}

// dispatchNext pushes the next link of env's chain, once: the push sets
// a marker beside the link's queue, in one script call, and a later push
// of the same link finds the marker and does nothing. The finished link
// is acked after this, by the caller.
func (s chains) dispatchNext(ctx context.Context, env *Envelope) error {
	if len(env.Chain) == 0 {
		return nil
	}
	next, delay, err := nextLink(env)
	if err != nil {
		return err
	}
	e, err := s.linkEngine(ctx, env, next)
	if err != nil {
		return err
	}
	out := &DispatchCall{Kind: DispatchKindLink, Jobs: []Outgoing{{Envelope: next, Delay: delay}},
		From: &JobInfo{ID: env.ID, Name: env.Name, Queue: env.Queue, Headers: env.Headers}}
	return e.pushThrough(ctx, out, func(ctx context.Context) error { return e.pushLink(ctx, next, delay) })
}

// pushLink pushes a chain link, delayed by delay, unless it was pushed
// before.
func (e *Engine) pushLink(ctx context.Context, next *Envelope, delay time.Duration) error {
	// The partition is chosen by the link's ID, not in turn as other
	// pushes are, so that a push made again finds the marker that the
	// first one set.
	q, payload, cg, err := e.stored(next, delay, time.Now().UnixMilli(), next.ID)
	if err != nil {
		return err
	}
	if err := e.remember(ctx, next.Queue); err != nil {
		return err
	}
	step := jobrdb.Enqueue{Width: jobrdb.WidthEach, Tags: oneJobTags(next.Tags), TagBound: MaxTagJobs}
	step.Add(next.ID, payload, delayMillis(delay), cg)
	c := e.enqueueCall(scriptChainPush, q, &step, []string{e.keys.Chained(q, next.ID)}, e.cfg.StateRetention.Milliseconds())
	n, err := e.store.RunOne(ctx, c).Int64()
	if err != nil {
		return fmt.Errorf("push next job %s (%s) of a chain: %w", next.ID, next.Name, err)
	}
	if n == 1 && !e.events.empty() {
		e.events.emit(Event{Kind: JobQueued, Queue: next.Queue, Name: next.Name, ID: next.ID, Delay: delay})
	}
	return nil
}

// done reports whether env, a link that is running again, pushed
// its successor before: it finished then, and its worker died before
// acking it. Such a link is acked without running again. First attempts
// are not checked.
func (s chains) done(ctx context.Context, res Reservation, env *Envelope) (bool, error) {
	if len(env.Chain) == 0 || res.Attempts < 2 {
		return false, nil
	}
	next, _, err := nextLink(env)
	if err != nil {
		return false, nil // the push reports it
	}
	e, err := s.linkEngine(ctx, env, next)
	if err != nil {
		return false, nil
	}
	pushed, err := e.store.Exists(ctx, e.keys.Chained(e.partitionFor(next.Queue, next.ID), next.ID))
	if err != nil {
		return false, fmt.Errorf("look for the next link of chain job %s: %w", env.ID, err)
	}
	return pushed, nil
}

// runCatch runs the catch callback of env's chain, if it has one, after
// env failed for good. Its remaining links are dropped with it.
func (s chains) runCatch(ctx context.Context, env *Envelope, cause error) {
	if len(env.Catch) == 0 {
		return
	}
	ref, err := decodeCallback(env.Catch)
	if err != nil {
		s.log.Error("chain catch callback does not decode", "job", env.Name, "id", env.ID, "err", err)
		return
	}
	s.runCallback(ctx, env.Queue, "chain catch", ref, Outcome{JobID: env.ID, JobName: env.Name, Err: cause})
}
