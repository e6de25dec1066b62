package runtime

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/send"
)

// What follows a job's failure for good (its batch's count and
// callbacks, its chain's catch, its failed hook, the release of its
// unique lock) runs only once the failed store has taken the job: a
// worker whose fail is refused, because its lease was lost and another
// worker holds the job, runs none of it.
//
// So that a worker that dies between the fail and the end of those hooks
// does not lose them, it records them as due first, in the queue's hooks
// set under the job's ID and reservation token, and removes the entry
// once they ran. A sweep in every worker claims entries older than
// RetryAfter: if the failed store holds the job, failed under that
// token, it runs the hooks; otherwise that fail never went through, and
// the entry is dropped. While a live worker runs them, after a fail that
// may have taken long through an outage, and through hooks that may take
// long, its heartbeat renews the entry, so a sweep claims only the
// entries of a worker that stopped renewing them. Hooks may so run
// twice (a worker cut off from Redis for RetryAfter while it runs them),
// never not at all.

// hooksMember is a hooks set member: the job's ID and the token of the
// reservation it is failed under. Tokens hold no space.
func hooksMember(ref Ref) string { return ref.ID + " " + ref.Token }

// hooksDue records ref's hooks as due, before its fail.
func (e *Engine) hooksDue(ctx context.Context, ref Ref) error {
	return call{Script: scriptHooksDue, Keys: []string{e.keys.Queue(ref.Queue).Hooks}, Args: []any{hooksMember(ref), ""}}.Run(ctx, e.rdb).Err()
}

// renewHooks renews the records of refs' hooks that still exist, so
// that no sweep claims hooks a live worker is running.
func (e *Engine) renewHooks(ctx context.Context, refs []Ref) error {
	calls := make([]call, len(refs))
	for i, ref := range refs {
		calls[i] = call{Script: scriptHooksDue, Keys: []string{e.keys.Queue(ref.Queue).Hooks}, Args: []any{hooksMember(ref), "XX"}}
	}
	_, err := send.All(ctx, e.rdb, calls)
	return err
}

// runningHooks marks ref's hooks as run by this worker until the
// returned func is called: the heartbeat renews their record meanwhile.
func (w *Worker) runningHooks(ref Ref) (done func()) {
	w.mu.Lock()
	w.hooking[ref] = true
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.hooking, ref)
		w.mu.Unlock()
	}
}

// claimHooks claims up to 100 entries of queue's hooks set recorded at
// least age ago.
func (e *Engine) claimHooks(ctx context.Context, queue string, age time.Duration) ([]Ref, error) {
	ms, err := call{Script: scriptHooksClaim, Keys: []string{e.keys.Queue(queue).Hooks}, Args: []any{age.Milliseconds(), 100}}.Run(ctx, e.rdb).StringSlice()
	if err != nil {
		return nil, err
	}
	refs := make([]Ref, 0, len(ms))
	for _, m := range ms {
		i := strings.LastIndexByte(m, ' ')
		if i < 0 {
			continue
		}
		refs = append(refs, Ref{Queue: queue, ID: m[:i], Token: m[i+1:]})
	}
	return refs, nil
}

// hooksDone removes ref's entry: its hooks ran, or will not.
func (w *Worker) hooksDone(ctx context.Context, ref Ref) {
	if err := w.e.rdb.ZRem(ctx, w.e.keys.Queue(ref.Queue).Hooks, hooksMember(ref)).Err(); err != nil {
		w.log.Warn("removing a failed job's hooks entry failed; a sweep may run its hooks again", "queue", ref.Queue, "id", ref.ID, "err", err)
	}
}

// sweeper runs sweepHooks every RetryAfter until ctx is done.
func (w *Worker) sweeper(ctx context.Context) {
	t := time.NewTicker(w.cfg.RetryAfter)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.sweepHooks(ctx)
		}
	}
}

// sweepHooks runs the hooks that workers of the worker's queues recorded
// as due more than RetryAfter ago and did not finish.
func (w *Worker) sweepHooks(ctx context.Context) {
	for _, q := range w.cfg.Queues {
		_, partitioned, _ := w.e.eachPartition(q, func(_ *Engine, p string) (int64, error) {
			w.sweepQueue(ctx, p)
			return 0, nil
		})
		if !partitioned {
			w.sweepQueue(ctx, q)
		}
	}
}

func (w *Worker) sweepQueue(ctx context.Context, queue string) {
	refs, err := w.e.claimHooks(ctx, queue, w.cfg.RetryAfter)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("looking for failed jobs' hooks left undone failed", "queue", queue, "err", err)
		}
		return
	}
	for _, ref := range refs {
		job, ok, err := w.e.inspector().Failed().Get(ctx, queue, ref.ID)
		if err != nil {
			w.log.Warn("reading a failed job for its hooks failed; trying again later", "queue", queue, "id", ref.ID, "err", err)
			continue
		}
		if !ok || job.token != ref.Token {
			w.hooksDone(ctx, ref) // that fail never went through, or the job left the store
			continue
		}
		env, err := DecodeEnvelope(queue, ref.ID, job.Payload)
		if err == nil {
			err = w.open(env)
		}
		if err != nil {
			w.log.Error("a failed job whose hooks were left undone does not decode; they do not run", "queue", queue, "id", ref.ID, "err", err)
			w.hooksDone(ctx, ref)
			continue
		}
		w.log.Info("running the hooks of a failed job whose worker did not finish them", "queue", queue, "job", env.Name, "id", ref.ID)
		done := w.runningHooks(ref)
		w.failed(ctx, env, errors.New(job.Error))
		done()
		w.hooksDone(ctx, ref)
	}
}
