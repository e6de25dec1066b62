package runtime

import (
	"context"
	"fmt"
	"time"
)

// BulkDispatcher dispatches many jobs at once: *Engine pushes them in
// pipelined script calls; jobtest's fake records each one. DispatchMany
// falls back to one Dispatch per job for a Dispatcher that is not one.
type BulkDispatcher interface {
	DispatchBulk(ctx context.Context, b *PendingBulk) (ids []string, err error)
}

// PendingBulk is many jobs with overrides that apply to all of them, sent
// by its Dispatch method. Its setters return it, so they chain.
type PendingBulk struct {
	jobs       []Job
	queue      string
	connection string
	delay      time.Duration
	delaySet   bool
}

// NewPendingBulk starts a dispatch of jobs.
func NewPendingBulk[T Job](jobs []T) *PendingBulk {
	b := &PendingBulk{jobs: make([]Job, len(jobs))}
	for i, j := range jobs {
		b.jobs[i] = j
	}
	return b
}

// DispatchMany dispatches jobs with their annotated options, and returns
// their IDs, in order: NewPendingBulk(jobs).Dispatch(ctx).
func DispatchMany[T Job](ctx context.Context, jobs []T) ([]string, error) {
	return NewPendingBulk(jobs).Dispatch(ctx)
}

// Delay makes every job ready only after d, overriding its annotation.
func (b *PendingBulk) Delay(d time.Duration) *PendingBulk {
	b.delay, b.delaySet = d, true
	return b
}

// OnQueue sends every job to queue q.
func (b *PendingBulk) OnQueue(q string) *PendingBulk {
	b.queue = q
	return b
}

// OnConnection sends every job through the dispatcher named c.
func (b *PendingBulk) OnConnection(c string) *PendingBulk {
	b.connection = c
	return b
}

// Len returns the number of jobs.
func (b *PendingBulk) Len() int { return len(b.jobs) }

// Pending returns job i as a single dispatch, with the overrides.
func (b *PendingBulk) Pending(i int) *PendingDispatch {
	p := NewPendingDispatch(b.jobs[i])
	p.queue, p.connection = b.queue, b.connection
	p.delay, p.delaySet = b.delay, b.delaySet
	return p
}

// Dispatch sends the jobs through the dispatcher of the first one's
// connection (as Dispatch finds it) and returns their IDs, in order. If
// some are not queued, it returns a *BulkError that says which (their
// IDs are ""); the others are queued. Jobs of one queue and delay go in
// script calls of up to 500 jobs, each atomic; the dispatch as a whole is
// not.
func (b *PendingBulk) Dispatch(ctx context.Context) ([]string, error) {
	if len(b.jobs) == 0 {
		return nil, nil
	}
	d, err := DispatcherFor(ctx, b.Pending(0).Connection())
	if err != nil {
		return nil, err
	}
	if bd, ok := d.(BulkDispatcher); ok {
		return bd.DispatchBulk(ctx, b)
	}
	ids := make([]string, len(b.jobs))
	var be *BulkError
	for i := range b.jobs {
		ids[i], err = d.Dispatch(ctx, b.Pending(i))
		if err != nil {
			be = be.add(len(b.jobs), i, err)
		}
	}
	return ids, be.orNil()
}

// BulkError reports the jobs of a DispatchMany that were not queued.
type BulkError struct {
	// Errs has one entry per job dispatched: nil for a job queued, its
	// error for one that was not.
	Errs []error
}

// Failed returns the indexes of the jobs that were not queued.
func (e *BulkError) Failed() []int {
	var out []int
	for i, err := range e.Errs {
		if err != nil {
			out = append(out, i)
		}
	}
	return out
}

// Error says how many jobs failed, and the first one's error.
func (e *BulkError) Error() string {
	failed := e.Failed()
	if len(failed) == 0 {
		return "jobgen: dispatch many: no job failed"
	}
	return fmt.Sprintf("jobgen: dispatch many: %d of %d jobs not queued; job %d: %v", len(failed), len(e.Errs), failed[0], e.Errs[failed[0]])
}

// Unwrap returns the errors of the jobs that failed, so errors.Is and
// errors.As look into them.
func (e *BulkError) Unwrap() []error {
	var out []error
	for _, err := range e.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// add records err for job i of n, allocating e if it is nil.
func (e *BulkError) add(n, i int, err error) *BulkError {
	if e == nil {
		e = &BulkError{Errs: make([]error, n)}
	}
	e.Errs[i] = err
	return e
}

func (e *BulkError) orNil() error {
	if e == nil {
		return nil
	}
	return e
}

// bulkChunk is the jobs of a DispatchBulk that go in one push call, with
// the indexes of the jobs they are.
type bulkChunk struct {
	pushGroup
	items []int
	envs  []*Envelope // of items, encoded into args inside the dispatch middleware
}

// DispatchBulk pushes b's jobs: *Engine is a BulkDispatcher. It builds
// and checks every job's envelope as Dispatch does, then pushes them as
// PushBulk does: in one pipeline of push calls, one per queue, delay and
// 500 jobs. Unique jobs are dispatched one at a time, each with its
// lock. A job refused before the push (it does not encode, is too
// large) or in a push call that failed is reported in a *BulkError.
func (e *Engine) DispatchBulk(ctx context.Context, b *PendingBulk) ([]string, error) {
	n := len(b.jobs)
	ids := make([]string, n)
	var be *BulkError
	var (
		chunks  []*bulkChunk
		open    = map[pushGroupKey]*bulkChunk{} // the chunk being filled, per queue and delay
		last    *bulkChunk
		lastKey pushGroupKey
	)
	now := time.Now()
	for i, job := range b.jobs {
		o := job.JobOptions()
		if o.UniqueFor > 0 {
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
		k := pushGroupKey{queue, delayMillis(delay)}
		c := last
		if c == nil || lastKey != k {
			c = open[k]
		}
		if c == nil || c.Jobs() >= pushChunk {
			if err := ValidateQueueName(queue); err != nil {
				be = be.add(n, i, fmt.Errorf("dispatch %s: %w", job.JobName(), err))
				continue
			}
			c = &bulkChunk{pushGroup: pushGroup{Queue: e.pushQueue(queue), Delay: k.delay, Args: make([]any, 0, 2*min(n-i, pushChunk))}}
			chunks = append(chunks, c)
			open[k] = c
		}
		last, lastKey = c, k
		env, err := e.bulkEnvelope(job, queue, cmpOr(b.connection, o.Connection), delay, now)
		if err != nil {
			be = be.add(n, i, err)
			continue
		}
		c.envs = append(c.envs, env)
		c.items = append(c.items, i)
		ids[i] = env.ID
	}
	if len(chunks) > 0 {
		be = e.pushBulkChunks(ctx, chunks, ids, be, n, now)
		if !e.events.empty() {
			for _, c := range chunks {
				for k, i := range c.items {
					if ids[i] != "" {
						e.events.emit(Event{Kind: JobQueued, Queue: e.logicalQueue(c.Queue), Name: b.jobs[i].JobName(), ID: c.Args[2*k].(string), Delay: time.Duration(c.Delay) * time.Millisecond})
					}
				}
			}
		}
	}
	return ids, be.orNil()
}

// bulkEnvelope builds and seals the envelope of one job of a
// DispatchBulk.
func (e *Engine) bulkEnvelope(job Job, queue, connection string, delay time.Duration, now time.Time) (*Envelope, error) {
	if delay < 0 {
		return nil, fmt.Errorf("dispatch %s: %w: negative delay %v", job.JobName(), ErrInvalid, delay)
	}
	env, err := newEnvelope(job, queue, connection, now)
	if err != nil {
		return nil, err
	}
	if err := e.seal(env); err != nil {
		return nil, err
	}
	return env, nil
}

// pushBulkChunks encodes the chunks' envelopes and pushes them, inside
// the dispatch middleware (which may set their headers) as one bulk
// push. A job that does not encode, or whose chunk's call failed, is
// reported in the BulkError and loses its ID.
func (e *Engine) pushBulkChunks(ctx context.Context, chunks []*bulkChunk, ids []string, be *BulkError, n int, now time.Time) *BulkError {
	out := &Outbound{Kind: DispatchBulk}
	for _, c := range chunks {
		for _, env := range c.envs {
			out.Jobs = append(out.Jobs, Outgoing{Envelope: env, Delay: time.Duration(c.Delay) * time.Millisecond})
		}
	}
	_ = e.pushThrough(ctx, out, func(ctx context.Context) error {
		for _, c := range chunks {
			items := c.items[:0:0]
			for k, env := range c.envs {
				payload, err := e.storedIn(env, c.Queue, now.UnixMilli())
				if err != nil {
					be = be.add(n, c.items[k], err)
					ids[c.items[k]] = ""
					continue
				}
				c.Args = append(c.Args, env.ID, payload)
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
func (e *Engine) pushChunks(ctx context.Context, chunks []*bulkChunk, ids []string, be *BulkError, n int) *BulkError {
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
		calls = append(calls, e.pushCall(c.Queue, c.Delay, c.Args))
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
