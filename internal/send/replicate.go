package send

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replicas is how many replicas must acknowledge each push, within
// Timeout; N 0 waits for none.
type Replicas struct {
	N       int
	Timeout time.Duration
}

// ErrNotReplicated is wrapped by the error of a push that fewer replicas
// than asked acknowledged in time. runtime.ErrNotReplicated is this
// value, and documents it.
var ErrNotReplicated = errors.New("jobgen: push not acknowledged by enough replicas")

// Pushed runs the calls of a push, followed by WAIT if r.N is set. It
// returns nil if every call went well, and otherwise one error per call:
// the call's own, or else that of the WAIT that covers it, which wraps
// ErrNotReplicated.
func Pushed(ctx context.Context, rdb redis.UniversalClient, calls []Call, r Replicas) []error {
	_, errs := PushedReplies(ctx, rdb, calls, r)
	return errs
}

// PushedReplies is Pushed, with each call's command too, for a caller
// that reads the calls' replies.
func PushedReplies(ctx context.Context, rdb redis.UniversalClient, calls []Call, r Replicas) ([]*redis.Cmd, []error) {
	if r.N == 0 {
		cmds, err := All(ctx, rdb, calls)
		if err == nil {
			return cmds, nil
		}
		return cmds, Errs(cmds)
	}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return waited(ctx, rdb, calls, r)
	}
	cmds := make([]*redis.Cmd, len(calls))
	// WAIT counts the replicas of the master it is sent to, for the
	// writes of its connection: each master gets a pipeline of its own
	// calls and a WAIT.
	var out []error
	fail := func(i int, err error) {
		if out == nil {
			out = make([]error, len(calls))
		}
		out[i] = err
	}
	byNode := map[*redis.Client][]int{}
	var order []*redis.Client
	for i, c := range calls {
		node, err := cc.MasterForKey(ctx, c.Keys[0])
		if err != nil {
			fail(i, err)
			continue
		}
		if _, seen := byNode[node]; !seen {
			order = append(order, node)
		}
		byNode[node] = append(byNode[node], i)
	}
	for _, node := range order {
		idx := byNode[node]
		sub := make([]Call, len(idx))
		for j, i := range idx {
			sub[j] = calls[i]
		}
		subCmds, errs := waited(ctx, node, sub, r)
		for j, i := range idx {
			cmds[i] = subCmds[j]
			if errs != nil && errs[j] != nil {
				fail(i, errs[j])
			}
		}
	}
	for i, cmd := range cmds {
		if cmd == nil { // its node was not found
			cmds[i] = redis.NewCmd(ctx)
			cmds[i].SetErr(out[i])
		}
	}
	return cmds, out
}

// FirstErr is the error a push reports for the errors of Pushed: the
// first call's own error, else the first WAIT error, else nil.
func FirstErr(callErrs []error) error {
	var waitErr error
	for _, err := range callErrs {
		switch {
		case err == nil:
		case !errors.Is(err, ErrNotReplicated):
			return err
		case waitErr == nil:
			waitErr = err
		}
	}
	return waitErr
}

// waited runs calls and WAIT in one pipeline, which go-redis sends on
// one connection, so WAIT covers exactly these writes. Calls that fail
// with NOSCRIPT did nothing and go again by source, with a WAIT of their
// own. It returns the calls' commands, and errors as Pushed does.
func waited(ctx context.Context, rdb redis.Cmdable, calls []Call, r Replicas) ([]*redis.Cmd, []error) {
	cmds := make([]*redis.Cmd, len(calls))
	waitOf := make([]*redis.Cmd, len(calls))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		Pipe(ctx, p, calls, cmds)
		w := p.Do(ctx, "WAIT", r.N, r.Timeout.Milliseconds())
		for i := range waitOf {
			waitOf[i] = w
		}
		return nil
	})
	Again(ctx, rdb, calls, cmds, func(p redis.Pipeliner, again []int) {
		w := p.Do(ctx, "WAIT", r.N, r.Timeout.Milliseconds())
		for _, i := range again {
			waitOf[i] = w
		}
	})
	var out []error
	for i, cmd := range cmds {
		err := cmd.Err()
		if err == nil || err == redis.Nil {
			err = waitErr(waitOf[i], r)
		}
		if err != nil {
			if out == nil {
				out = make([]error, len(calls))
			}
			out[i] = err
		}
	}
	return cmds, out
}

// waitErr reads the reply of a WAIT.
func waitErr(w *redis.Cmd, r Replicas) error {
	n, err := w.Int64()
	if err != nil {
		return fmt.Errorf("%w: WAIT: %v", ErrNotReplicated, err)
	}
	if n < int64(r.N) {
		return fmt.Errorf("%w: %d of %d replicas within %v", ErrNotReplicated, n, r.N, r.Timeout)
	}
	return nil
}
