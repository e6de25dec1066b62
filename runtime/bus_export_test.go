package runtime

import (
	"context"
	"time"
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

// HooksDue is Engine.hooksDue, for tests.
func (e *Engine) HooksDue(ctx context.Context, ref Ref) error { return e.hooksDue(ctx, ref) }

// ClaimHooks is Engine.claimHooks, for tests.
func (e *Engine) ClaimHooks(ctx context.Context, queue string, age time.Duration) ([]Ref, error) {
	return e.claimHooks(ctx, queue, age)
}

// WaitReserve is Engine.waitReserve, for tests.
func (e *Engine) WaitReserve(ctx context.Context, queues []string, timeout time.Duration, n int, lease time.Duration) (string, ReserveResult, bool, error) {
	return e.waitReserve(ctx, queues, timeout, n, lease, "")
}

// Tracked is the number of jobs whose leases w's heartbeat keeps, for
// tests.
func (w *Worker) Tracked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.active)
}
