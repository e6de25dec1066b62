package runtime

import (
	"context"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"time"

	"github.com/redis/go-redis/v9"
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

// CrashAfterPush makes r's next RelayOnce calls stop after the push,
// before the rows are deleted, with err (nil to stop no more).
func (r *Relay) CrashAfterPush(err error) {
	r.afterPush = nil
	if err != nil {
		r.afterPush = func() error { return err }
	}
}

// AfterPush makes r call f after each push, before the rows are deleted;
// an error from f ends RelayOnce there.
func (r *Relay) AfterPush(f func() error) { r.afterPush = f }

// CrashAfterCommit makes r's next RelayOnce calls stop after the rows
// are deleted, before their marks are released.
func (r *Relay) CrashAfterCommit(err error) {
	r.afterCommit = nil
	if err != nil {
		r.afterCommit = func() error { return err }
	}
}

// RelayedMarks returns the marks of queue's relayed set with their
// scores, for tests.
func (e *Engine) RelayedMarks(ctx context.Context, queue string) (map[string]float64, error) {
	zs, err := e.rdb.ZRangeWithScores(ctx, e.keys.Relayed(queue), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, z := range zs {
		out[z.Member.(string)] = z.Score
	}
	return out, nil
}

// AgeRelayedMarks makes the pending marks of queue's relayed set look
// pushed by ago earlier, for tests.
func (e *Engine) AgeRelayedMarks(ctx context.Context, queue string, by time.Duration) error {
	marks, err := e.RelayedMarks(ctx, queue)
	if err != nil {
		return err
	}
	for m, s := range marks {
		if s >= 1e15 {
			if err := e.rdb.ZAdd(ctx, e.keys.Relayed(queue), redis.Z{Score: s - float64(by.Milliseconds()), Member: m}).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// OutboxPush runs outbox_push for one job, for tests.
func (e *Engine) OutboxPush(ctx context.Context, queue string, deadline int64, mark, id string, delay int64, payload []byte) error {
	step := jobrdb.Enqueue{Queue: e.keys.Queue(queue), Width: jobrdb.WidthEach}
	step.Add(id, payload, delay, "")
	return call{Script: scriptOutboxPush, Keys: step.Keys(e.keys.Relayed(queue)), Args: step.Args(deadline, 1, mark)}.Run(ctx, e.rdb).Err()
}

// OutboxRelease runs outbox_release for marks of queue, for tests.
func (e *Engine) OutboxRelease(ctx context.Context, queue string, grace time.Duration, marks ...string) (int64, error) {
	args := []any{grace.Milliseconds()}
	for _, m := range marks {
		args = append(args, m)
	}
	return call{Script: scriptOutboxRelease, Keys: []string{e.keys.Relayed(queue)}, Args: args}.Run(ctx, e.rdb).Int64()
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
