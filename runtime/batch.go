package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// PendingBatch is a batch of jobs to dispatch together, whose progress
// is kept in Redis and which runs callbacks when its jobs are done
// (Laravel's Bus::batch). Build one with NewBatch; its setters return it,
// so they chain.
//
//	id, err := runtime.NewBatch(
//		ImportRows{From: 0, To: 1000},
//		ImportRows{From: 1000, To: 2000},
//		runtime.Chain(Reindex{}, Notify{}), // a chain is one item
//	).Name("import").
//		Then(importDone.With(fileID)).
//		Catch(importFailed.With(fileID)).
//		Finally(cleanUp.With(fileID)).
//		Dispatch(ctx)
//
// Every job of the batch counts, each link of a chain included. When the
// last job succeeds, the Then callbacks run; when the first job fails
// for good, the Catch callbacks run and, unless AllowFailures was set,
// the batch is cancelled; when every job has run once (succeeded, failed
// for good, or is held behind a failed link), the Finally callbacks run.
// Each callback runs once, in the worker that ran the job that made it
// due; if that worker dies first, the job runs again and runs it then.
// Callbacks must be registered with RegisterCallback.
//
// The jobs of a cancelled batch that have not run are skipped: each is
// settled as a success without running its handler.
//
// A batch's state lives on the Redis of the engine that dispatched it,
// under keys of its own cluster slot, and expires StateRetention after
// its last change. Its jobs all go through that engine.
type PendingBatch struct {
	jobs []Job
	opts BatchOptions
}

// BatchOptions are a batch's settings, as a fake dispatcher sees them.
type BatchOptions struct {
	Name string
	// Queue and Connection apply to the jobs that name none.
	Queue         string
	Connection    string
	AllowFailures bool
	Then          []CallbackRef
	Catch         []CallbackRef
	Finally       []CallbackRef
}

// NewBatch starts a batch of jobs. A job may be a *PendingDispatch, to
// override its queue or delay, or a *PendingChain, whose links then run
// one after another inside the batch.
func NewBatch(jobs ...Job) *PendingBatch { return &PendingBatch{jobs: jobs} }

// Name names the batch, for people reading its status.
func (b *PendingBatch) Name(name string) *PendingBatch {
	b.opts.Name = name
	return b
}

// OnQueue sends the jobs that name no queue of their own to q.
func (b *PendingBatch) OnQueue(q string) *PendingBatch {
	b.opts.Queue = q
	return b
}

// OnConnection dispatches the batch through the dispatcher named c.
func (b *PendingBatch) OnConnection(c string) *PendingBatch {
	b.opts.Connection = c
	return b
}

// AllowFailures keeps the batch going when a job fails for good; by
// default the first failure cancels it.
func (b *PendingBatch) AllowFailures() *PendingBatch {
	b.opts.AllowFailures = true
	return b
}

// Then adds a callback that runs once every job of the batch has
// succeeded, unless the batch was cancelled.
func (b *PendingBatch) Then(cb CallbackRef) *PendingBatch {
	b.opts.Then = append(b.opts.Then, cb)
	return b
}

// Catch adds a callback that runs when the first job of the batch fails
// for good. Its Outcome.Err is that job's error.
func (b *PendingBatch) Catch(cb CallbackRef) *PendingBatch {
	b.opts.Catch = append(b.opts.Catch, cb)
	return b
}

// Finally adds a callback that runs once every job of the batch has run
// once, whatever the outcome.
func (b *PendingBatch) Finally(cb CallbackRef) *PendingBatch {
	b.opts.Finally = append(b.opts.Finally, cb)
	return b
}

// Jobs returns the batch's jobs.
func (b *PendingBatch) Jobs() []Job { return b.jobs }

// Options returns the batch's settings.
func (b *PendingBatch) Options() BatchOptions { return b.opts }

// BatchDispatcher sends a batch: *Engine pushes it to Redis; a fake may
// record it. The dispatcher of a batch's connection must be one.
type BatchDispatcher interface {
	DispatchBatch(ctx context.Context, b *PendingBatch) (id string, err error)
}

// Dispatch sends the batch through the dispatcher of its connection and
// returns the batch's ID.
func (b *PendingBatch) Dispatch(ctx context.Context) (string, error) {
	d, err := DispatcherFor(ctx, b.opts.Connection)
	if err != nil {
		return "", err
	}
	bd, ok := d.(BatchDispatcher)
	if !ok {
		return "", fmt.Errorf("%w: dispatch batch: the dispatcher %T cannot dispatch batches", ErrInvalid, d)
	}
	return bd.DispatchBatch(ctx, b)
}

// DispatchBatch creates the batch in Redis, then pushes its jobs, and
// returns the batch's ID: *Engine is a BatchDispatcher. If the push
// fails, the batch is deleted again.
func (e *Engine) DispatchBatch(ctx context.Context, b *PendingBatch) (string, error) {
	id := NewID()
	fields, out, n, err := b.build(id, e.seal)
	if err != nil {
		return "", err
	}
	bk := e.keys.Batch(id)
	if err := e.store.CreateBatch(ctx, bk, n, e.cfg.StateRetention.Milliseconds(), newToken(), fields); err != nil {
		return "", fmt.Errorf("dispatch batch: %w", err)
	}
	err = e.indexBatch(ctx, id)
	if err == nil {
		err = e.PushMany(ctx, out)
	}
	if err != nil {
		_ = e.store.DeleteBatch(context.WithoutCancel(ctx), bk)
		return "", fmt.Errorf("dispatch batch: %w", err)
	}
	return id, nil
}

// Envelopes returns the envelopes the batch's jobs are pushed with, as
// Engine.DispatchBatch builds them but unsealed and under no batch ID,
// after the checks it makes before it writes anything: the callbacks,
// each job's encoding, its connection, and the queue it goes to. A fake
// dispatcher (jobtest) calls it to refuse what the engine refuses.
func (b *PendingBatch) Envelopes() ([]*Envelope, error) {
	_, out, _, err := b.build("", nil)
	if err != nil {
		return nil, err
	}
	envs := make([]*Envelope, len(out))
	for i, o := range out {
		envs[i] = o.Envelope
	}
	return envs, nil
}

// build checks the batch and returns the fields of its record and its
// jobs' envelopes for batch id, sealed by seal if not nil, with the
// number of jobs, each link of a chain included.
func (b *PendingBatch) build(id string, seal func(*Envelope) error) (fields []any, out []Outgoing, n int, err error) {
	fields = []any{"name", b.opts.Name, "queue", b.opts.Queue, "connection", b.opts.Connection}
	if b.opts.AllowFailures {
		fields = append(fields, "allow_failures", "1")
	}
	for _, cb := range []struct {
		kind string
		refs []CallbackRef
	}{{"then", b.opts.Then}, {"catch", b.opts.Catch}, {"finally", b.opts.Finally}} {
		if len(cb.refs) == 0 {
			continue
		}
		for _, r := range cb.refs {
			if err := r.check(); err != nil {
				return nil, nil, 0, fmt.Errorf("dispatch batch: %s: %w", cb.kind, err)
			}
		}
		enc, err := msgpack.Marshal(cb.refs)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("dispatch batch: %s: %w", cb.kind, err)
		}
		fields = append(fields, cb.kind, enc)
	}
	out, n, err = batchJobs(id, b.opts, b.jobs, seal)
	if err != nil {
		return nil, nil, 0, err
	}
	return fields, out, n, nil
}

// indexBatch adds batch id to the list of batches (keys.Batches), and
// drops the entries older than StateRetention from it.
func (e *Engine) indexBatch(ctx context.Context, id string) error {
	created, _ := idTime(id)
	if err := e.store.IndexBatch(ctx, e.keys.Batches(), id, created, created-e.cfg.StateRetention.Milliseconds()); err != nil {
		return fmt.Errorf("index batch: %w", err)
	}
	return nil
}

// batchJobs builds and checks the envelopes of jobs for batch id, sealed
// by seal if not nil, and counts them, each link of a chain included.
func batchJobs(id string, opts BatchOptions, jobs []Job, seal func(*Envelope) error) ([]Outgoing, int, error) {
	out := make([]Outgoing, 0, len(jobs))
	n := 0
	for i, j := range jobs {
		var p *PendingDispatch
		if c, ok := j.(*PendingChain); ok {
			var err error
			if p, err = c.pending(); err != nil {
				return nil, 0, fmt.Errorf("batch job %d: %w", i+1, err)
			}
		} else {
			p = asPending(j)
		}
		for _, link := range append([]Job{p}, p.chain...) {
			if c := cmpOr(asPending(link).connection, link.JobOptions().Connection); c != "" && c != opts.Connection {
				return nil, 0, fmt.Errorf("%w: batch job %d (%s) names connection %q; the jobs of a batch go through the batch's connection", ErrInvalid, i+1, link.JobName(), c)
			}
			if link.JobOptions().UniqueFor > 0 {
				return nil, 0, fmt.Errorf("%w: batch job %d (%s) is unique (unique_for): the jobs of a batch take no unique lock; dispatch it on its own", ErrInvalid, i+1, link.JobName())
			}
		}
		if p.chainQueue == "" {
			p.chainQueue = opts.Queue
		}
		p.chainConnection = opts.Connection
		p.batchID = id
		env, err := p.envelope(seal)
		if err == nil {
			// Checked before the batch is counted; the push checks it too.
			err = ValidateQueueName(env.Queue)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("batch job %d: %w", i+1, err)
		}
		n += 1 + len(env.Chain)
		out = append(out, Outgoing{Envelope: env, Delay: p.DelayDuration()})
	}
	return out, n, nil
}

// BatchStatus is the state of a batch, read from Redis.
type BatchStatus struct {
	ID   string
	Name string
	// Total counts every job added to the batch, each link of a chain
	// included.
	Total int
	// Pending counts the jobs that have not yet succeeded: queued,
	// running, failed, or held behind a failed link of a chain.
	Pending int
	// Failed counts the jobs that failed for good and have not since
	// succeeded on a retry.
	Failed int
	// FailedIDs are the IDs of those jobs.
	FailedIDs []string
	// AllowFailures is set when a failure does not cancel the batch.
	AllowFailures bool
	CreatedAt     time.Time
	// CancelledAt is when the batch was cancelled, by BatchStore.Cancel
	// or by a failure; zero if it was not.
	CancelledAt time.Time
	// FinishedAt is when the last of its jobs succeeded; zero until
	// every job has.
	FinishedAt time.Time
}

// Processed is the number of jobs that have succeeded.
func (b BatchStatus) Processed() int { return b.Total - b.Pending }

// Progress is the share of jobs processed, from 0 to 100.
func (b BatchStatus) Progress() int {
	if b.Total == 0 {
		return 0
	}
	return b.Processed() * 100 / b.Total
}

// HasFailures reports whether a job of the batch has failed for good and
// not succeeded since.
func (b BatchStatus) HasFailures() bool { return b.Failed > 0 }

// Cancelled reports whether the batch was cancelled.
func (b BatchStatus) Cancelled() bool { return !b.CancelledAt.IsZero() }

// Finished reports whether every job of the batch has succeeded.
func (b BatchStatus) Finished() bool { return !b.FinishedAt.IsZero() }
