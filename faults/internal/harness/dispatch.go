package harness

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/runtime"
)

// Dispatcher pushes Tasks and remembers which pushes Redis acknowledged:
// those jobs must not be lost.
type Dispatcher struct {
	t     testing.TB
	e     *runtime.Engine
	queue string

	mu      sync.Mutex
	seq     int
	acked   map[string]int // job ID -> seq
	errs    []error
	checked bool
	missed  int // pushes whose job's payload checkKeys did not find
}

// NewDispatcher returns a dispatcher that pushes to queue through e.
func NewDispatcher(t testing.TB, e *runtime.Engine, queue string) *Dispatcher {
	return &Dispatcher{t: t, e: e, queue: queue, acked: map[string]int{}}
}

// Push pushes tasks in one PushMany, numbering them, and returns their
// IDs. On an error none of them counts as acknowledged, though some may
// have been pushed.
func (d *Dispatcher) Push(ctx context.Context, tasks ...faultworker.Task) ([]string, error) {
	out := make([]runtime.Outgoing, len(tasks))
	seqs := make([]int, len(tasks))
	d.mu.Lock()
	for i := range tasks {
		d.seq++
		tasks[i].Seq = d.seq
		seqs[i] = d.seq
	}
	d.mu.Unlock()
	for i, task := range tasks {
		p := runtime.NewPendingDispatch(task).OnQueue(d.queue)
		env, err := p.Envelope()
		if err != nil {
			return nil, err
		}
		out[i] = runtime.Outgoing{Envelope: env, Delay: p.DelayDuration()}
	}
	err := d.e.PushMany(ctx, out)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.errs = append(d.errs, err)
		return nil, err
	}
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.Envelope.ID
		d.acked[o.Envelope.ID] = seqs[i]
	}
	if !d.checked && len(ids) > 0 {
		// A worker may have run and acked the job before the check reads
		// it, and a machine under load makes that likely: only a payload
		// missing at several pushes in a row says the keys moved.
		found, err := d.checkKeys(ctx, ids[len(ids)-1])
		switch {
		case err != nil:
			d.t.Error(err)
			d.checked = true
		case found:
			d.checked = true
		default:
			d.missed++
			if d.missed == keyChecks {
				d.t.Errorf("the payloads of %d pushes in a row were not in the payloads hash harness.Keys names (job %s the last): internal/keyspace/keyspace.go has changed; update faults/internal/harness/keys.go", keyChecks, ids[len(ids)-1])
				d.checked = true
			}
		}
	}
	return ids, nil
}

// keyChecks is how many pushes in a row must find their job's payload
// missing for checkKeys to fail.
const keyChecks = 5

// checkKeys says whether the payloads hash Keys names holds job id: the
// runtime keeps payloads where Keys says.
func (d *Dispatcher) checkKeys(ctx context.Context, id string) (bool, error) {
	return d.e.Client().HExists(ctx, Keys(d.e.Config().Prefix, d.queue).Payloads, id).Result()
}

// PushN pushes n tasks made by mk, in batches of up to 500.
func (d *Dispatcher) PushN(ctx context.Context, n int, mk func(i int) faultworker.Task) {
	d.t.Helper()
	for start := 0; start < n; start += 500 {
		batch := make([]faultworker.Task, 0, 500)
		for i := start; i < min(n, start+500); i++ {
			batch = append(batch, mk(i))
		}
		if _, err := d.Push(ctx, batch...); err != nil {
			d.t.Fatalf("push: %v", err)
		}
	}
}

// Stream pushes one task made by mk every interval until ctx is done,
// whatever errors come back, and returns when it stops.
func (d *Dispatcher) Stream(ctx context.Context, every time.Duration, mk func() faultworker.Task) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A push under way when ctx ends still finishes, so that the end
		// of the stream is no failure.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = d.Push(pctx, mk())
		cancel()
	}
}

// Acked returns the acknowledged jobs: ID -> sequence number.
func (d *Dispatcher) Acked() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int, len(d.acked))
	for k, v := range d.acked {
		out[k] = v
	}
	return out
}

// Errors returns the errors of pushes that failed.
func (d *Dispatcher) Errors() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]error(nil), d.errs...)
}
