package runtime

import (
	"context"
	"time"
)

// ScriptSHA returns the SHA1 of the embedded script name, so that tests
// can recognise its calls on the wire.
func ScriptSHA(name string) string {
	for _, s := range allScripts {
		if s.name == name {
			return s.sha
		}
	}
	panic("no script " + name)
}

// Unreserve is Engine.unreserve, for tests.
func (e *Engine) Unreserve(ctx context.Context, refs ...Ref) error { return e.unreserve(ctx, refs...) }

// WaitReserve is Engine.waitReserve, for tests.
func (e *Engine) WaitReserve(ctx context.Context, queues []string, timeout time.Duration, n int, lease time.Duration) (string, Batch, bool, error) {
	return e.waitReserve(ctx, queues, timeout, n, lease, "")
}
