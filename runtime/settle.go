package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Settling reserved jobs: extend, ack, release and give back, each a
// compare-and-set on the reservation's token.

// pairCalls groups refs by queue and splits them into calls of at most
// per refs each, with argument pairs id, token after head.
func pairCalls(refs []Ref, per int, build func(queue string, args []any) call) ([]call, [][]Ref) {
	var calls []call
	var groups [][]Ref
	byQueue := map[string][]Ref{}
	var order []string
	for _, r := range refs {
		if _, ok := byQueue[r.Queue]; !ok {
			order = append(order, r.Queue)
		}
		byQueue[r.Queue] = append(byQueue[r.Queue], r)
	}
	for _, q := range order {
		rs := byQueue[q]
		for len(rs) > 0 {
			n := min(per, len(rs))
			args := make([]any, 0, 2*n)
			for _, r := range rs[:n] {
				args = append(args, r.ID, r.Token)
			}
			calls = append(calls, build(q, args))
			groups = append(groups, rs[:n])
			rs = rs[n:]
		}
	}
	return calls, groups
}

// applyRefs runs the calls and returns the refs whose token was stale,
// reading the per-pair statuses from each reply after skip leading values.
// It rings the doorbells bells in the same round trip (settleBells).
func applyRefs(ctx context.Context, store *jobrdb.Store, calls []call, groups [][]Ref, skip int, bells []string) ([]Ref, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	cmds, err := store.RunRinging(ctx, calls, bells)
	if err != nil {
		return nil, err
	}
	var lost []Ref
	for i, cmd := range cmds {
		st, err := cmd.Int64Slice()
		if err != nil {
			return nil, err
		}
		for j, r := range groups[i] {
			if skip+j >= len(st) || st[skip+j] != 1 {
				lost = append(lost, r)
			}
		}
	}
	return lost, nil
}

// lostError joins one LeaseLostError per stale ref.
func lostError(lost []Ref) error {
	if len(lost) == 0 {
		return nil
	}
	errs := make([]error, len(lost))
	for i, r := range lost {
		errs[i] = &LeaseLostError{Queue: r.Queue, ID: r.ID}
	}
	return errors.Join(errs...)
}

// ack is Ack, returning the refs whose ack was refused.
func (e *Engine) ack(ctx context.Context, refs ...Ref) (lost []Ref, err error) {
	return e.ackProgress(ctx, nil, refs...)
}

// ackProgress is ack; the calls that ack a job of progressed (IDs of jobs
// that reported progress) delete the progress entries of the jobs they
// ack, and the others do not touch the progress hash.
func (e *Engine) ackProgress(ctx context.Context, progressed map[string]bool, refs ...Ref) (lost []Ref, err error) {
	calls, groups := e.ackCalls(progressed, refs)
	lost, err = applyRefs(ctx, e.store, calls, groups, 0, e.settleBells(groups))
	if err != nil {
		return nil, fmt.Errorf("ack: %w", err)
	}
	return lost, nil
}

// ackOrFinish acks items, whose refs are refs: the plain ones as
// ackProgress does (progressed names the jobs that reported progress),
// those that leave something behind with finish, all in one round trip.
// It returns the refs whose ack was refused.
func (e *Engine) ackOrFinish(ctx context.Context, items []ackItem, refs []Ref, progressed map[string]bool) ([]Ref, error) {
	var fins []Finish
	for _, it := range items {
		if it.fin != nil {
			fins = append(fins, *it.fin)
		}
	}
	if len(fins) == 0 {
		return e.ackProgress(ctx, progressed, refs...)
	}
	plain := make([]Ref, 0, len(items)-len(fins))
	for _, it := range items {
		if it.fin == nil {
			plain = append(plain, it.ref)
		}
	}
	calls, groups := e.ackCalls(progressed, plain)
	fcalls, fgroups, err := e.finishCalls(fins)
	if err != nil {
		return nil, err
	}
	groups = append(groups, fgroups...)
	lost, err := applyRefs(ctx, e.store, append(calls, fcalls...), groups, 0, e.settleBells(groups))
	if err != nil {
		return nil, fmt.Errorf("ack: %w", err)
	}
	return lost, nil
}

// ackCalls builds the ack calls of refs, as ackProgress sends them.
func (e *Engine) ackCalls(progressed map[string]bool, refs []Ref) ([]call, [][]Ref) {
	return pairCalls(refs, 1000, func(q string, args []any) call {
		qk := e.keys.Queue(q)
		keys := []string{qk.Reserved, qk.State, qk.Payloads, qk.Errors}
		for i := 0; len(progressed) > 0 && i < len(args); i += 2 {
			if progressed[args[i].(string)] {
				keys = append(keys, qk.Progress)
				break
			}
		}
		if gk := e.groupKeys(q, true); gk != nil {
			// The group keys come after the progress hash.
			keys = append(append(keys[:4], qk.Progress), gk...)
		}
		return call{Script: scriptAck, Keys: keys, Args: args}
	})
}

// absent returns the refs whose job has no state entry: it is in no
// queue, reserved or waiting.
func (e *Engine) absent(ctx context.Context, refs []Ref) (map[Ref]bool, error) {
	keys, ids := make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		keys[i], ids[i] = e.keys.Queue(r.Queue).State, r.ID
	}
	has, err := e.store.HasEntries(ctx, keys, ids)
	if err != nil {
		return nil, err
	}
	gone := map[Ref]bool{}
	for i, ok := range has {
		if !ok {
			gone[refs[i]] = true
		}
	}
	return gone, nil
}

// ReleaseOpts says how to release a job.
type ReleaseOpts struct {
	// Delay before the job is ready again; 0 puts it at the back of the
	// ready list now.
	Delay time.Duration
	// Exception counts the release toward the job's MaxExceptions.
	Exception bool
	// Deferral gives back the attempt the job's start counted, so that
	// the release uses none of its Tries (DeferRequest). It is no
	// exception: it cannot be set with Exception.
	Deferral bool
}

// unreserve gives back reserved jobs that never started: they go back to
// the front of their ready lists in the order of refs, and lose the
// attempt their reserve counted. Stale refs are reported as in Ack.
func (e *Engine) unreserve(ctx context.Context, refs ...Ref) error {
	calls, groups := pairCalls(refs, 1000, func(q string, args []any) call {
		qk := e.keys.Queue(q)
		return call{Script: scriptUnreserve, Keys: append([]string{qk.Ready, qk.Reserved, qk.State, qk.Notify}, e.groupKeys(q, false)...), Args: args}
	})
	lost, err := applyRefs(ctx, e.store, calls, groups, 0, nil) // unreserve.lua rings
	if err != nil {
		return fmt.Errorf("give back jobs: %w", err)
	}
	return lostError(lost)
}

var scriptStart = mustScript("start")

// start starts held jobs (Engine.reserve with hold) as their handlers
// are about to run: it counts each one's attempt and moves it to its
// plain token, in one call per queue and 1,000 jobs. It returns the
// reservations as started, with ok[i] false for a job no longer held
// under its ref (its lease ran out).
func (e *Engine) start(ctx context.Context, jobs []Reservation) (started []Reservation, ok []bool, err error) {
	refs := make([]Ref, len(jobs))
	at := make(map[Ref]int, len(jobs))
	for i, j := range jobs {
		refs[i] = Ref{Queue: j.Queue, ID: j.ID, Token: strings.TrimPrefix(j.Token, heldPrefix)}
		at[refs[i]] = i
	}
	calls, groups := pairCalls(refs, 1000, func(q string, args []any) call {
		qk := e.keys.Queue(q)
		return call{Script: scriptStart, Keys: []string{qk.Reserved, qk.State}, Args: args}
	})
	cmds, _ := e.store.Run(ctx, calls)
	started, ok = append([]Reservation(nil), jobs...), make([]bool, len(jobs))
	for c, cmd := range cmds {
		got, cerr := cmd.Int64Slice()
		if cerr == nil && len(got) != len(groups[c]) {
			cerr = fmt.Errorf("unexpected reply %v", got)
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("start jobs of %s: %w", groups[c][0].Queue, cerr))
			continue
		}
		for k, r := range groups[c] {
			i := at[r]
			if got[k] > 0 {
				started[i].Token, started[i].Attempts, ok[i] = r.Token, int(got[k]), true
			}
		}
	}
	return started, ok, err
}
