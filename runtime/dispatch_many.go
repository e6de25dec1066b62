package runtime

import (
	"context"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// ManyDispatcher dispatches many jobs at once: *Engine pushes them in
// pipelined script calls; jobtest's fake records each one. DispatchMany
// falls back to one Dispatch per job for a Dispatcher that is not one.
type ManyDispatcher interface {
	DispatchMany(ctx context.Context, b *PendingMany) (ids []string, err error)
}

// PendingMany is many jobs with overrides that apply to all of them, sent
// by its Dispatch method. Its setters return it, so they chain.
type PendingMany struct {
	jobs       []Job
	queue      string
	connection string
	delay      time.Duration
	delaySet   bool
	at         time.Time
}

// NewPendingMany starts a dispatch of jobs.
func NewPendingMany[T Job](jobs []T) *PendingMany {
	b := &PendingMany{jobs: make([]Job, len(jobs))}
	for i, j := range jobs {
		b.jobs[i] = j
	}
	return b
}

// DispatchMany dispatches jobs with their annotated options, and returns
// their IDs, in order: NewPendingMany(jobs).Dispatch(ctx).
func DispatchMany[T Job](ctx context.Context, jobs []T) ([]string, error) {
	return NewPendingMany(jobs).Dispatch(ctx)
}

// Delay makes every job ready only after d, overriding its annotation;
// a d of zero or less makes them ready at once (PendingDispatch.Delay).
func (b *PendingMany) Delay(d time.Duration) *PendingMany {
	b.delay, b.delaySet, b.at = d, true, time.Time{}
	return b
}

// At makes every job ready at t, overriding its delay and its
// annotation's; a t already past makes them ready at once
// (PendingDispatch.At).
func (b *PendingMany) At(t time.Time) *PendingMany {
	b.at, b.delay, b.delaySet = t, 0, false
	return b
}

// OnQueue sends every job to queue q.
func (b *PendingMany) OnQueue(q string) *PendingMany {
	b.queue = q
	return b
}

// OnConnection sends every job through the dispatcher named c.
func (b *PendingMany) OnConnection(c string) *PendingMany {
	b.connection = c
	return b
}

// Len returns the number of jobs.
func (b *PendingMany) Len() int { return len(b.jobs) }

// Pending returns job i as a single dispatch, with the overrides.
func (b *PendingMany) Pending(i int) *PendingDispatch {
	p := NewPendingDispatch(b.jobs[i])
	p.queue, p.connection = b.queue, b.connection
	p.delay, p.delaySet, p.at = b.delay, b.delaySet, b.at
	return p
}

// Dispatch sends the jobs through the dispatcher of the first one's
// connection (as Dispatch finds it) and returns their IDs, in order. If
// some are not queued, it returns a *DispatchManyError that says which (their
// IDs are ""); the others are queued. Jobs of one queue and delay go in
// script calls of up to 500 jobs, each atomic; the dispatch as a whole is
// not.
func (b *PendingMany) Dispatch(ctx context.Context) ([]string, error) {
	if len(b.jobs) == 0 {
		return nil, nil
	}
	d, err := DispatcherFor(ctx, b.Pending(0).Connection())
	if err != nil {
		return nil, err
	}
	if bd, ok := d.(ManyDispatcher); ok {
		return bd.DispatchMany(ctx, b)
	}
	ids := make([]string, len(b.jobs))
	var be *DispatchManyError
	for i := range b.jobs {
		ids[i], err = d.Dispatch(ctx, b.Pending(i))
		if err != nil {
			be = be.add(len(b.jobs), i, err)
		}
	}
	return ids, be.orNil()
}

// DispatchManyError reports the jobs of a DispatchMany that were not queued.
type DispatchManyError struct {
	// Errs has one entry per job dispatched: nil for a job queued, its
	// error for one that was not.
	Errs []error
}

// Failed returns the indexes of the jobs that were not queued.
func (e *DispatchManyError) Failed() []int {
	var out []int
	for i, err := range e.Errs {
		if err != nil {
			out = append(out, i)
		}
	}
	return out
}

// Error says how many jobs failed, and the first one's error.
func (e *DispatchManyError) Error() string {
	failed := e.Failed()
	if len(failed) == 0 {
		return "jobgen: dispatch many: no job failed"
	}
	return fmt.Sprintf("jobgen: dispatch many: %d of %d jobs not queued; job %d: %v", len(failed), len(e.Errs), failed[0], e.Errs[failed[0]])
}

// Unwrap returns the errors of the jobs that failed, so errors.Is and
// errors.As look into them.
func (e *DispatchManyError) Unwrap() []error {
	var out []error
	for _, err := range e.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// add records err for job i of n, allocating e if it is nil.
func (e *DispatchManyError) add(n, i int, err error) *DispatchManyError {
	if e == nil {
		e = &DispatchManyError{Errs: make([]error, n)}
	}
	e.Errs[i] = err
	return e
}

func (e *DispatchManyError) orNil() error {
	if e == nil {
		return nil
	}
	return e
}

// bulkChunk is the jobs of a DispatchMany that go in one push call, with
// the indexes of the jobs they are.
type bulkChunk struct {
	pushGroup
	items []int
	envs  []*Envelope // of items, encoded into args inside the dispatch middleware
}

// DispatchMany pushes b's jobs: *Engine is a ManyDispatcher. It builds
// and checks every job's envelope as Dispatch does, then pushes them as
// PushMany does: in one pipeline of push calls, one per queue, delay and
// 500 jobs. Unique jobs are dispatched one at a time, each with its
// lock, and so are debounced ones, each joining its burst. A job refused before the push (it does not encode, is too
// large) or in a push call that failed is reported in a *DispatchManyError.
func (e *Engine) DispatchMany(ctx context.Context, b *PendingMany) ([]string, error) {
	n := len(b.jobs)
	ids := make([]string, n)
	var be *DispatchManyError
	var (
		chunks  []*bulkChunk
		open    = map[pushGroupKey]*bulkChunk{} // the chunk being filled, per queue and delay
		last    *bulkChunk
		lastKey pushGroupKey
	)
	now := time.Now()
	for i, job := range b.jobs {
		o := job.JobOptions()
		if o.UniqueFor > 0 || o.Debounce > 0 {
			id, err := e.Dispatch(ctx, b.Pending(i))
			if err != nil {
				be = be.add(n, i, err)
			}
			ids[i] = id
			continue
		}
		queue := cmpOr(b.queue, o.Queue, DefaultQueue)
		delay := o.Delay
		if b.delaySet {
			delay = b.delay
		}
		if !b.at.IsZero() {
			delay = time.Until(b.at)
		}
		delay = max(delay, 0) // a delay already past: ready at once
		if err := ValidateQueueName(queue); err != nil {
			be = be.add(n, i, fmt.Errorf("dispatch %s: %w", job.JobName(), err))
			continue
		}
		env, err := e.bulkEnvelope(job, queue, cmpOr(b.connection, o.Connection), delay, now)
		if err != nil {
			be = be.add(n, i, err)
			continue
		}
		w := jobrdb.WidthPlain
		if env.Group() != "" {
			w = jobrdb.WidthGrouped
		}
		k := pushGroupKey{queue, delayMillis(delay), w}
		c := last
		if c == nil || lastKey != k {
			c = open[k]
		}
		if c == nil || len(c.envs) >= pushChunk { // its Args are filled inside the dispatch middleware
			c = &bulkChunk{pushGroup: pushGroup{Queue: e.partitionFor(queue, ""), Delay: k.delay, Width: w, Args: make([]any, 0, w*min(n-i, pushChunk))}}
			chunks = append(chunks, c)
			open[k] = c
		}
		last, lastKey = c, k
		c.envs = append(c.envs, env)
		c.items = append(c.items, i)
		ids[i] = env.ID
	}
	if len(chunks) > 0 {
		be = e.pushManyChunks(ctx, chunks, ids, be, n, now)
		if !e.events.empty() {
			for _, c := range chunks {
				for k, i := range c.items {
					if ids[i] != "" {
						e.events.emit(Event{Kind: JobQueued, Queue: e.logicalQueue(c.Queue), Name: b.jobs[i].JobName(), ID: c.Args[c.W()*k].(string), Delay: time.Duration(c.Delay) * time.Millisecond})
					}
				}
			}
		}
	}
	return ids, be.orNil()
}

// bulkEnvelope builds and seals the envelope of one job of a
// DispatchMany.
func (e *Engine) bulkEnvelope(job Job, queue, connection string, delay time.Duration, now time.Time) (*Envelope, error) {
	env, err := newEnvelope(job, queue, connection, now)
	if err != nil {
		return nil, err
	}
	if err := e.seal(env); err != nil {
		return nil, err
	}
	return env, nil
}

// pushManyChunks encodes the chunks' envelopes and pushes them, inside
// the dispatch middleware (which may set their headers) as one bulk
// push. A job that does not encode, or whose chunk's call failed, is
// reported in the DispatchManyError and loses its ID.
func (e *Engine) pushManyChunks(ctx context.Context, chunks []*bulkChunk, ids []string, be *DispatchManyError, n int, now time.Time) *DispatchManyError {
	out := &DispatchCall{Kind: DispatchKindMany}
	for _, c := range chunks {
		for _, env := range c.envs {
			out.Jobs = append(out.Jobs, Outgoing{Envelope: env, Delay: time.Duration(c.Delay) * time.Millisecond})
		}
	}
	_ = e.pushThrough(ctx, out, func(ctx context.Context) error {
		for _, c := range chunks {
			items := c.items[:0:0]
			for k, env := range c.envs {
				payload, err := e.encodeStored(env, c.Queue, now.UnixMilli())
				if err != nil {
					be = be.add(n, c.items[k], err)
					ids[c.items[k]] = ""
					continue
				}
				// The dispatch middleware may have changed the job's group:
				// the chunk's width holds, and a change is refused.
				cg := env.groupArg()
				if (cg != "") != (c.W() == jobrdb.WidthGrouped) {
					be = be.add(n, c.items[k], fmt.Errorf("dispatch %s: %w: the dispatch middleware changed whether the job has a group", env.Name, ErrInvalid))
					ids[c.items[k]] = ""
					continue
				}
				tagJob(&c.pushGroup, env.Tags)
				if cg != "" {
					c.Args = append(c.Args, env.ID, payload, cg)
				} else {
					c.Args = append(c.Args, env.ID, payload)
				}
				items = append(items, c.items[k])
			}
			c.items = items
		}
		be = e.pushChunks(ctx, chunks, ids, be, n)
		return be.orNil()
	})
	return be
}

// pushChunks registers the chunks' queues and pushes them in one
// pipeline; the jobs of a chunk whose call failed get its error, and
// lose their ID.
func (e *Engine) pushChunks(ctx context.Context, chunks []*bulkChunk, ids []string, be *DispatchManyError, n int) *DispatchManyError {
	calls := make([]call, 0, len(chunks))
	sent := make([]*bulkChunk, 0, len(chunks))
	for _, c := range chunks {
		if c.Jobs() == 0 {
			continue
		}
		if err := e.remember(ctx, c.Queue); err != nil {
			for _, i := range c.items {
				be = be.add(n, i, err)
				ids[i] = ""
			}
			continue
		}
		calls = append(calls, e.pushCall(&c.pushGroup))
		sent = append(sent, c)
	}
	if len(calls) == 0 {
		return be
	}
	errs := e.runPush(ctx, calls)
	for k, err := range errs {
		if err == nil {
			continue
		}
		err = pushError(err)
		for _, i := range sent[k].items {
			be = be.add(n, i, err)
			ids[i] = ""
		}
	}
	return be
}

// cmpOr returns the first of vals that is not "".
func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// rawJob is a job known by its wire name and encoded body only.
type rawJob struct {
	name string
	body []byte
}

func (j rawJob) JobName() string            { return j.name }
func (j rawJob) JobOptions() JobOptions     { return JobOptions{} }
func (j rawJob) EncodeJob() ([]byte, error) { return j.body, nil }

// PushRaw dispatches a job by its wire name with an already encoded body
// (msgpack, as Encode writes it), for producers that do not import the
// job's Go type, and returns its ID. It goes to queue ("" for the
// default) through the default dispatcher as Dispatch finds it, with no
// options: the worker's defaults apply. A worker routes it by name; a
// body that does not decode into the registered type fails the job at
// once with ErrDecode.
func PushRaw(ctx context.Context, queue, name string, body []byte) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: push raw: empty job name", ErrInvalid)
	}
	p := NewPendingDispatch(rawJob{name: name, body: body})
	if queue != "" {
		p.OnQueue(queue)
	}
	return p.Dispatch(ctx)
}
