package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Dispatcher sends a pending dispatch somewhere: *Engine pushes it to
// Redis; a test may record it instead.
type Dispatcher interface {
	Dispatch(ctx context.Context, p *PendingDispatch) (id string, err error)
}

// Where Dispatch finds its dispatcher:
//
//  1. one set on the context with WithDispatcher (for tests and fakes);
//  2. for a job with a connection name, the one set with SetConnection;
//  3. the default, set once at start-up with SetDefaultDispatcher.
//
// DispatchSync finds its router the same way: WithRouter, then
// SetDefaultRouter.
var defaults struct {
	sync.RWMutex
	dispatcher  Dispatcher
	connections map[string]Dispatcher
	router      *Router
}

type dispatcherKey struct{}
type routerKey struct{}

// SetDefaultDispatcher sets the dispatcher that Dispatch uses when the
// context names none; usually the *Engine opened at start-up.
func SetDefaultDispatcher(d Dispatcher) {
	defaults.Lock()
	defaults.dispatcher = d
	defaults.Unlock()
}

// SetConnection names a dispatcher for jobs dispatched on connection name
// (the `connection=` annotation, or OnConnection).
func SetConnection(name string, d Dispatcher) {
	defaults.Lock()
	if defaults.connections == nil {
		defaults.connections = map[string]Dispatcher{}
	}
	defaults.connections[name] = d
	defaults.Unlock()
}

// WithDispatcher returns a context whose dispatches, on any connection,
// go to d. Tests use it to swap in a fake.
func WithDispatcher(ctx context.Context, d Dispatcher) context.Context {
	return context.WithValue(ctx, dispatcherKey{}, d)
}

// DispatcherFor returns the dispatcher for connection ("" for the
// default) as seen from ctx: WithDispatcher's, then for a named
// connection SetConnection's, and for the default one HandlerContext's,
// then SetDefaultDispatcher's.
func DispatcherFor(ctx context.Context, connection string) (Dispatcher, error) {
	if d, ok := ctx.Value(dispatcherKey{}).(Dispatcher); ok && d != nil {
		return d, nil
	}
	defaults.RLock()
	defer defaults.RUnlock()
	if connection != "" {
		if d := defaults.connections[connection]; d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("%w: no dispatcher for connection %q: call runtime.SetConnection(%q, engine)", ErrNoDispatcher, connection, connection)
	}
	if d, ok := ctx.Value(handlerDispatcherKey{}).(Dispatcher); ok {
		return d, nil
	}
	if defaults.dispatcher == nil {
		return nil, ErrNoDispatcher
	}
	return defaults.dispatcher, nil
}

// SetDefaultRouter sets the router DispatchSync uses when the context
// names none.
func SetDefaultRouter(r *Router) {
	defaults.Lock()
	defaults.router = r
	defaults.Unlock()
}

// WithRouter returns a context whose DispatchSync calls use r.
func WithRouter(ctx context.Context, r *Router) context.Context {
	return context.WithValue(ctx, routerKey{}, r)
}

// HandlerContext returns ctx with what a job's handler needs to dispatch
// and to run synchronous work: d as its dispatcher for the default
// connection (Dispatch, chains, batches, queued listeners; jobs on a
// named connection still go to SetConnection's) and r as its router
// (DispatchSync, Fire's synchronous listeners). A dispatcher of
// WithDispatcher and a router of WithRouter already on ctx win. A
// Worker's handlers run under it with the worker's engine and router,
// and jobtest's Harness.Context calls it with the harness's, so a
// handler finds the same things in a test and under a worker.
func HandlerContext(ctx context.Context, d Dispatcher, r *Router) context.Context {
	if d != nil {
		ctx = context.WithValue(ctx, handlerDispatcherKey{}, d)
	}
	if got, ok := ctx.Value(routerKey{}).(*Router); (!ok || got == nil) && r != nil {
		ctx = WithRouter(ctx, r)
	}
	return ctx
}

// handlerDispatcherKey holds HandlerContext's dispatcher.
type handlerDispatcherKey struct{}

func routerFor(ctx context.Context) (*Router, error) {
	if r, ok := ctx.Value(routerKey{}).(*Router); ok && r != nil {
		return r, nil
	}
	defaults.RLock()
	defer defaults.RUnlock()
	if defaults.router == nil {
		return nil, errors.New("jobgen: DispatchSync: no router: call runtime.SetDefaultRouter(r) at start-up, or runtime.WithRouter(ctx, r)")
	}
	return defaults.router, nil
}

// PendingDispatch is a job with per-dispatch overrides, sent by its
// Dispatch method. Its setters return it, so they chain.
type PendingDispatch struct {
	job        Job
	queue      string
	connection string
	delay      time.Duration
	delaySet   bool
	at         time.Time // set by At; zero if not
	chain      []Job

	// Set by OnGroup and WithGroupLimit (group.go).
	group         string
	groupSet      bool
	groupLimit    int
	groupLimitSet bool

	// Set by Chain, Catch and batches (chain.go, batch.go): the chain's
	// queue and connection for links that name none, its catch callback,
	// and the batch the job belongs to.
	chainQueue      string
	chainConnection string
	catch           *CallbackRef
	batchID         string

	// Set by Debounce and DebounceMaxWait (debounce.go); nil for the
	// dispatches that set neither, so that they carry no more.
	deb *debounceOverride
}

// NewPendingDispatch starts a dispatch of job.
func NewPendingDispatch(job Job) *PendingDispatch { return &PendingDispatch{job: job} }

// Delay makes the job ready only after d, overriding its annotation. A
// d of zero or less makes it ready at once, as Laravel runs a job whose
// delay is already past (a delay computed from the clock, say).
func (p *PendingDispatch) Delay(d time.Duration) *PendingDispatch {
	p.delay, p.delaySet, p.at = d, true, time.Time{}
	return p
}

// At makes the job ready at t, overriding its delay (the later of Delay
// and At counts) and its annotation's. A t already past makes it ready
// at once. Dispatch reads t against this process's clock as it pushes.
// DispatchTx writes t into the outbox row, and the relay reads it
// against the database's clock as it claims the row: the job is ready
// at t, or as its transaction commits if t is past by then
// (docs/outbox.md, "Delays and At"). A chain's links after the first,
// a schedule's entries and debounced jobs refuse it.
func (p *PendingDispatch) At(t time.Time) *PendingDispatch {
	p.at, p.delay, p.delaySet = t, 0, false
	return p
}

// AtTime returns the time At set, zero if none.
func (p *PendingDispatch) AtTime() time.Time { return p.at }

// hasAt says whether p, or a dispatch it wraps, has a time from At.
func (p *PendingDispatch) hasAt() bool {
	for ; p != nil; p, _ = p.job.(*PendingDispatch) {
		if !p.at.IsZero() {
			return true
		}
	}
	return false
}

// OnQueue sends the job to queue q.
func (p *PendingDispatch) OnQueue(q string) *PendingDispatch {
	p.queue = q
	return p
}

// OnConnection sends the job through the dispatcher named c.
func (p *PendingDispatch) OnConnection(c string) *PendingDispatch {
	p.connection = c
	return p
}

// WithChain makes jobs run one after another once this job succeeds; each
// runs only if the one before it succeeded, and a job with a delay
// (such as U{}.Delay(d)) is pushed delayed by it then.
func (p *PendingDispatch) WithChain(jobs ...Job) *PendingDispatch {
	p.chain = append(p.chain, jobs...)
	return p
}

// Job returns the job being dispatched.
func (p *PendingDispatch) Job() Job { return p.job }

// Queue returns the queue the job goes to.
func (p *PendingDispatch) Queue() string {
	switch {
	case p.queue != "":
		return p.queue
	case p.chainQueue != "":
		return p.chainQueue
	case p.job.JobOptions().Queue != "":
		return p.job.JobOptions().Queue
	}
	return DefaultQueue
}

// Connection returns the connection name ("" for the default).
func (p *PendingDispatch) Connection() string {
	if p.connection != "" {
		return p.connection
	}
	if p.chainConnection != "" {
		return p.chainConnection
	}
	return p.job.JobOptions().Connection
}

// DelayDuration returns the delay before the job is ready: 0 for a delay
// already past (Delay), and for At the time left until its t, by this
// process's clock.
func (p *PendingDispatch) DelayDuration() time.Duration {
	if !p.at.IsZero() {
		return max(time.Until(p.at), 0)
	}
	if p.delaySet {
		return max(p.delay, 0)
	}
	return max(p.job.JobOptions().Delay, 0)
}

// Chain returns the jobs chained after this one.
func (p *PendingDispatch) Chain() []Job { return p.chain }

// Envelope builds the envelope to push, with a new ID and the chain
// encoded inside it. Bodies are not sealed: an *Engine seals the bodies
// of encrypted jobs with its key ring when it dispatches.
func (p *PendingDispatch) Envelope() (*Envelope, error) { return p.build(nil) }

// envelope builds the envelope; seal, if not nil, encrypts the bodies of
// encrypted jobs, the chain's links included.
// A debounced job is refused: only Engine.Dispatch debounces.
func (p *PendingDispatch) envelope(seal func(*Envelope) error) (*Envelope, error) {
	if err := p.refuseDebounce(); err != nil { // debounce.go
		return nil, err
	}
	return p.build(seal)
}

// build is envelope without the check of debounced jobs.
func (p *PendingDispatch) build(seal func(*Envelope) error) (*Envelope, error) {
	env, err := newEnvelope(p.job, p.Queue(), p.Connection(), time.Now())
	if err != nil {
		return nil, err
	}
	env.BatchID = p.batchID
	if err := p.applyGroup(env); err != nil {
		return nil, err
	}
	if p.batchID == "" {
		setUnique(env, p.job) // unique.go
	}
	if err := p.encodeChain(env, seal); err != nil { // chain.go
		return nil, err
	}
	if seal != nil {
		if err := seal(env); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// newEnvelope builds the envelope of job, dispatched at now.
func newEnvelope(job Job, queue, connection string, now time.Time) (*Envelope, error) {
	if needs := job.JobOptions().Needs; len(needs) > 0 {
		return nil, fmt.Errorf("%w: job %s needs the results of %s (needs=): it runs only as a step of a workflow; add it with its generated AddTo or SpawnAfter", ErrInvalid, job.JobName(), strings.Join(needs, ", "))
	}
	return newStepEnvelope(job, queue, connection, now)
}

// newStepEnvelope is newEnvelope without the refusal of a job that
// needs results: a step of a workflow (workflow_store.go).
func newStepEnvelope(job Job, queue, connection string, now time.Time) (*Envelope, error) {
	if c, ok := underlying(job).(*PendingChain); ok {
		// It would encode its first job only, and drop the rest.
		return nil, fmt.Errorf("%w: job %s is a chain of %d jobs: dispatch it with its own Dispatch or runtime.Dispatch, and list a chain's jobs in it rather than nest chains", ErrInvalid, c.JobName(), len(c.jobs))
	}
	body, err := job.EncodeJob()
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", job.JobName(), err)
	}
	o := job.JobOptions()
	env := &Envelope{
		ID:            newIDAt(now.UnixMilli()), // its time is DispatchedAt, so the encoding leaves that out
		Name:          job.JobName(),
		Queue:         queue,
		Connection:    connection,
		Body:          body,
		Tries:         o.Tries,
		Backoff:       o.Backoff,
		Timeout:       o.Timeout,
		MaxExceptions: o.MaxExceptions,
		FailOnTimeout: o.FailOnTimeout,
		Encrypted:     o.Encrypted,
		Tags:          o.Tags,
		DispatchedAt:  now.UnixMilli(),
	}
	if o.RetryUntil > 0 {
		env.RetryUntil = now.Add(o.RetryUntil).UnixMilli()
	}
	env.SchemaVersion = schemaVersionOf(job) // schema_version.go
	if g, limit := groupOfJob(job); g != "" {
		if err := ValidateGroup(g); err != nil {
			return nil, fmt.Errorf("job %s: %w", env.Name, err)
		}
		env.setGroup(g, limit)
	}
	return env, nil
}

// Dispatch sends the job through its dispatcher and returns its ID.
func (p *PendingDispatch) Dispatch(ctx context.Context) (string, error) {
	d, err := DispatcherFor(ctx, p.Connection())
	if err != nil {
		return "", err
	}
	return d.Dispatch(ctx, p)
}

// Dispatch sends job with its annotated options and returns its ID. A
// *PendingChain is dispatched as a chain, by its own Dispatch.
func Dispatch(ctx context.Context, job Job) (string, error) {
	if c, ok := job.(*PendingChain); ok {
		return c.Dispatch(ctx)
	}
	return NewPendingDispatch(job).Dispatch(ctx)
}

// DispatchIf dispatches job if cond holds; otherwise it returns "", nil.
func DispatchIf(ctx context.Context, cond bool, job Job) (string, error) {
	if !cond {
		return "", nil
	}
	return Dispatch(ctx, job)
}

// DispatchUnless dispatches job unless cond holds.
func DispatchUnless(ctx context.Context, cond bool, job Job) (string, error) {
	return DispatchIf(ctx, !cond, job)
}

// DispatchSync runs job's handler now, in this goroutine, through the
// router from WithRouter or SetDefaultRouter. Nothing touches Redis.
func DispatchSync(ctx context.Context, job Job) error {
	r, err := routerFor(ctx)
	if err != nil {
		return err
	}
	return r.RunSync(ctx, job)
}

// Dispatch pushes p's job, and returns its ID: *Engine is a Dispatcher.
// It seals encrypted jobs with EngineConfig.Keys, and for a unique job
// whose key is held it pushes nothing and returns a *DuplicateError. A
// debounced job (debounce.go) is added to its burst, and the ID returned
// is the burst's job's.
func (e *Engine) Dispatch(ctx context.Context, p *PendingDispatch) (string, error) {
	if p.debounced() {
		return e.dispatchDebounced(ctx, p)
	}
	env, err := p.envelope(e.seal)
	if err != nil {
		return "", err
	}
	undo, err := e.lockUnique(ctx, env, p.JobOptions().UniqueFor) // unique.go
	if err != nil {
		return "", err
	}
	if err := e.PushMany(ctx, []Outgoing{{Envelope: env, Delay: p.DelayDuration(), At: p.at}}); err != nil {
		undo()
		return "", fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	return env.ID, nil
}
