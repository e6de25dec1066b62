package harness

import (
	"context"
	"fmt"
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
		d.checked = true
		if err := d.checkKeys(ctx, ids[0]); err != nil {
			d.t.Error(err)
		}
	}
	return ids, nil
}

// checkKeys makes sure the runtime keeps payloads where Keys says.
func (d *Dispatcher) checkKeys(ctx context.Context, id string) error {
	ok, err := d.e.Client().HExists(ctx, Keys(d.e.Config().Prefix, d.queue).Payloads, id).Result()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("job %s is not in the payloads hash harness.Keys names: internal/keyspace/keyspace.go has changed; update faults/internal/harness/keys.go", id)
	}
	return nil
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
