package jobtest

import (
	"context"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Fake is a runtime.Dispatcher that records dispatches instead of
// sending them. It is safe for concurrent use.
type Fake struct {
	mu         sync.Mutex
	dispatches []Dispatch
	batches    []Batch
	events     []Fired // fake_events.go
}

// NewFake returns a Fake with nothing recorded.
func NewFake() *Fake { return &Fake{} }

// Context returns ctx with f as its dispatcher (runtime.WithDispatcher),
// for jobs on any connection.
func (f *Fake) Context(ctx context.Context) context.Context {
	return runtime.WithDispatcher(ctx, f)
}

// Dispatch is one recorded dispatch.
type Dispatch struct {
	// ID is the ID the fake returned.
	ID string
	// Job is the dispatched job, unwrapped from any *PendingDispatch.
	Job        runtime.Job
	Queue      string
	Connection string
	Delay      time.Duration
	// Chain lists the jobs chained after Job, unwrapped.
	Chain []runtime.Job
	// ChainDelays holds, for each job of Chain, the delay it is pushed
	// with once the link before it succeeds: its own (Job{}.Delay(d)),
	// else its annotation's, as the engine encodes it; 0 for none.
	ChainDelays []time.Duration
	// ChainQueues and ChainConnections hold, for each job of Chain, the
	// queue and connection ("" for the default) it is pushed to: its own
	// (Job{}.OnQueue(q)), else the chain's, else its annotation's, else
	// the default queue, as the engine encodes it.
	ChainQueues      []string
	ChainConnections []string
	// InTx is set for a dispatch made with DispatchTx, which a fake
	// records at once: it knows nothing of the transaction.
	InTx bool
}

// Dispatch records p and returns a new job ID; it implements
// runtime.Dispatcher. Nothing is sent anywhere. A dispatch the engine
// would refuse (a job that does not encode, a bad queue name, a chain
// nested in a chain) is refused with the engine's error, and not
// recorded.
func (f *Fake) Dispatch(ctx context.Context, p *runtime.PendingDispatch) (string, error) {
	return f.record(p, false)
}

// DispatchTx records p, as Dispatch does, marked InTx; it implements
// runtime.TxDispatcher. tx is not touched.
func (f *Fake) DispatchTx(ctx context.Context, tx runtime.Tx, p *runtime.PendingDispatch) (string, error) {
	return f.record(p, true)
}

func (f *Fake) record(p *runtime.PendingDispatch, inTx bool) (string, error) {
	if _, err := p.Envelope(); err != nil {
		return "", err
	}
	if err := runtime.ValidateQueueName(p.Queue()); err != nil { // the engine checks it as it pushes
		return "", err
	}
	d := Dispatch{
		ID:         runtime.NewID(),
		Job:        unwrap(p.Job()),
		Queue:      p.Queue(),
		Connection: p.Connection(),
		Delay:      p.DelayDuration(),
		InTx:       inTx,
	}
	for i, j := range p.Chain() {
		d.Chain = append(d.Chain, unwrap(j))
		// A *PendingDispatch's options carry its own delay in place of
		// the annotated one.
		d.ChainDelays = append(d.ChainDelays, j.JobOptions().Delay)
		q, c := p.LinkQueue(i)
		d.ChainQueues = append(d.ChainQueues, q)
		d.ChainConnections = append(d.ChainConnections, c)
	}
	f.mu.Lock()
	f.dispatches = append(f.dispatches, d)
	f.mu.Unlock()
	return d.ID, nil
}

// Dispatches returns what f recorded, in order.
func (f *Fake) Dispatches() []Dispatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Dispatch(nil), f.dispatches...)
}

// Batch is one recorded batch.
type Batch struct {
	// ID is the batch ID the fake returned.
	ID      string
	Options runtime.BatchOptions
	// Jobs are the batch's jobs, unwrapped from any *PendingDispatch; a
	// chain stays a *runtime.PendingChain.
	Jobs []runtime.Job
	// Queues are the queues the engine would push Jobs to, in order (for
	// a chain, its first job's), by the engine's own rule
	// (PendingBatch.Envelopes).
	Queues []string
	// InTx is set for a batch dispatched with DispatchTx.
	InTx bool
}

// DispatchBatchTx records b, as DispatchBatch does, marked InTx; it
// implements runtime.BatchTxDispatcher. tx is not touched.
func (f *Fake) DispatchBatchTx(ctx context.Context, tx runtime.Tx, b *runtime.PendingBatch) (string, error) {
	return f.recordBatch(b, true)
}

// DispatchBatch records b and returns a new batch ID; it implements
// runtime.BatchDispatcher. Nothing is sent anywhere, and the batch's
// jobs are not recorded as dispatches. A batch the engine would refuse
// (a callback not registered as one, a job that does not encode, names
// another connection or a bad queue) is refused with the engine's error,
// and not recorded.
func (f *Fake) DispatchBatch(ctx context.Context, b *runtime.PendingBatch) (string, error) {
	return f.recordBatch(b, false)
}

func (f *Fake) recordBatch(b *runtime.PendingBatch, inTx bool) (string, error) {
	envs, err := b.Envelopes() // what the engine refuses, the fake refuses
	if err != nil {
		return "", err
	}
	rec := Batch{ID: runtime.NewID(), Options: b.Options(), InTx: inTx}
	for i, j := range b.Jobs() {
		rec.Jobs = append(rec.Jobs, unwrap(j))
		rec.Queues = append(rec.Queues, envs[i].Queue)
	}
	f.mu.Lock()
	f.batches = append(f.batches, rec)
	f.mu.Unlock()
	return rec.ID, nil
}

// Batches returns the batches f recorded, in order.
func (f *Fake) Batches() []Batch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Batch(nil), f.batches...)
}

// Reset forgets everything recorded.
func (f *Fake) Reset() {
	f.mu.Lock()
	f.dispatches, f.batches, f.events = nil, nil, nil
	f.mu.Unlock()
}

// Jobs returns the recorded jobs of type T, in dispatch order (chained
// jobs are not included; see Dispatch.Chain).
func Jobs[T runtime.Job](f *Fake) []T {
	var out []T
	for _, d := range f.Dispatches() {
		if j, ok := d.Job.(T); ok {
			out = append(out, j)
		}
	}
	return out
}

// unwrap returns the job a *PendingDispatch wraps, however deep.
func unwrap(j runtime.Job) runtime.Job {
	for {
		p, ok := j.(*runtime.PendingDispatch)
		if !ok {
			return j
		}
		j = p.Job()
	}
}
