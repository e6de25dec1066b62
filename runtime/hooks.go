package runtime

import (
	"context"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
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

// hookOf is the hooks set entry of ref.
func hookOf(ref Ref) jobrdb.Hook { return jobrdb.Hook{Queue: ref.Queue, ID: ref.ID, Token: ref.Token} }

// hooksDue records ref's hooks as due, before its fail.
func (e *Engine) hooksDue(ctx context.Context, ref Ref) error {
	return e.store.HooksDue(ctx, hookOf(ref))
}

// renewHooks renews the records of refs' hooks that still exist, so
// that no sweep claims hooks a live worker is running.
func (e *Engine) renewHooks(ctx context.Context, refs []Ref) error {
	hs := make([]jobrdb.Hook, len(refs))
	for i, ref := range refs {
		hs[i] = hookOf(ref)
	}
	return e.store.RenewHooks(ctx, hs)
}

// claimHooks claims up to 100 entries of queue's hooks set recorded at
// least age ago.
func (e *Engine) claimHooks(ctx context.Context, queue string, age time.Duration) ([]Ref, error) {
	hs, err := e.store.ClaimHooks(ctx, queue, age.Milliseconds(), 100)
	refs := make([]Ref, len(hs))
	for i, h := range hs {
		refs[i] = Ref(h)
	}
	return refs, err
}
