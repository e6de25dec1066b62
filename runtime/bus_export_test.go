package runtime

import (
	"context"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// ScriptSHA returns the SHA1 of the embedded script name, so that tests
// can recognise its calls on the wire.
func ScriptSHA(name string) string {
	for _, s := range allScripts {
		if s.Name == name {
			return s.SHA
		}
	}
	panic("no script " + name)
}

// Unreserve is Engine.unreserve, for tests.
func (e *Engine) Unreserve(ctx context.Context, refs ...Ref) error { return e.unreserve(ctx, refs...) }

// ReleaseWithError is Engine.release, for tests.
func (e *Engine) ReleaseWithError(ctx context.Context, opts ReleaseOpts, cause error, refs ...Ref) error {
	return e.release(ctx, opts, cause, refs...)
}

// HooksDue is Engine.hooksDue, for tests.
func (e *Engine) HooksDue(ctx context.Context, ref Ref) error { return e.hooksDue(ctx, ref) }

// ClaimHooks is Engine.claimHooks, for tests.
func (e *Engine) ClaimHooks(ctx context.Context, queue string, age time.Duration) ([]Ref, error) {
	return e.claimHooks(ctx, queue, age)
}

// WaitReserve is Engine.waitReserve, for tests.
func (e *Engine) WaitReserve(ctx context.Context, queues []string, timeout time.Duration, n int, lease time.Duration) (string, ReserveResult, bool, error) {
	return e.waitReserve(ctx, queues, timeout, n, lease, false, "")
}

// Tracked is the number of jobs whose leases w's heartbeat keeps, for
// tests.
func (w *Worker) Tracked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.active)
}

// OutboxPush runs outbox_push for one job, for tests.
func (e *Engine) OutboxPush(ctx context.Context, queue string, deadline int64, mark, id string, delay int64, payload []byte) error {
	step := jobrdb.Enqueue{Queue: e.keys.Queue(queue), Width: jobrdb.WidthEach}
	step.Add(id, payload, delay, "")
	return call{Script: scriptOutboxPush, Keys: step.Keys(e.keys.Relayed(queue)), Args: step.Args(deadline, 1, mark)}.Run(ctx, e.rdb).Err()
}

// OutboxRelease releases marks of queue through the store, as a relay
// does, for tests.
func (e *Engine) OutboxRelease(ctx context.Context, queue string, grace time.Duration, marks ...string) (int64, error) {
	return e.store.ReleaseMarks(ctx, grace.Milliseconds(), map[string][]string{queue: marks})
}

// ReserveHeld is Engine.reserve with hold, for tests.
func (e *Engine) ReserveHeld(ctx context.Context, queue string, n int, lease time.Duration) (ReserveResult, error) {
	return e.reserve(ctx, queue, n, lease, true)
}

// Start is Engine.start for one job, for tests.
func (e *Engine) Start(ctx context.Context, res Reservation) (Reservation, bool, error) {
	started, ok, err := e.start(ctx, []Reservation{res})
	return started[0], ok[0], err
}
