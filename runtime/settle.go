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

// byQueue groups refs by queue, in the order of their first refs, and
// splits each queue's into settles of at most per refs each. Refs all of
// one queue, as a worker's mostly are, are split where they lie.
func (e *Engine) byQueue(refs []Ref, per int) ([]jobrdb.Jobs, [][]Ref) {
	var jobs []jobrdb.Jobs
	var groups [][]Ref
	split := func(rs []Ref) {
		q := rs[0].Queue
		grouped := e.grouped.has(q)
		for len(rs) > 0 {
			n := min(per, len(rs))
			j := jobrdb.NewJobs(q, n, grouped)
			for _, r := range rs[:n] {
				j.Add(r.ID, r.Token)
			}
			jobs = append(jobs, j)
			groups = append(groups, rs[:n:n])
			rs = rs[n:]
		}
	}
	one := true
	for _, r := range refs {
		if r.Queue != refs[0].Queue {
			one = false
			break
		}
	}
	if one {
		if len(refs) > 0 {
			split(refs)
		}
		return jobs, groups
	}
	byQueue := map[string][]Ref{}
	var order []string
	for _, r := range refs {
		if _, ok := byQueue[r.Queue]; !ok {
			order = append(order, r.Queue)
		}
		byQueue[r.Queue] = append(byQueue[r.Queue], r)
	}
	for _, q := range order {
		split(byQueue[q])
	}
	return jobs, groups
}

// missed returns the refs of groups that a settle missed.
func missed(groups [][]Ref, miss []jobrdb.Miss) []Ref {
	var lost []Ref
	for _, m := range miss {
		lost = append(lost, groups[m.Call][m.Job])
	}
	return lost
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
	jobs, groups := e.ackJobs(progressed, refs)
	miss, err := e.store.Ack(ctx, jobs, nil, e.settleBells(groups))
	if err != nil {
		return nil, fmt.Errorf("ack: %w", err)
	}
	return missed(groups, miss), nil
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
	jobs, groups := e.ackJobs(progressed, plain)
	fjobs, fgroups, err := e.finishJobs(fins)
	if err != nil {
		return nil, err
	}
	groups = append(groups, fgroups...)
	miss, err := e.store.Ack(ctx, jobs, fjobs, e.settleBells(groups))
	if err != nil {
		return nil, fmt.Errorf("ack: %w", err)
	}
	return missed(groups, miss), nil
}

// ackJobs groups refs for their acks, as ackProgress sends them: a call
// that acks a job of progressed deletes the progress entries of the jobs
// it acks.
func (e *Engine) ackJobs(progressed map[string]bool, refs []Ref) ([]jobrdb.Jobs, [][]Ref) {
	jobs, groups := e.byQueue(refs, 1000)
	for i := 0; len(progressed) > 0 && i < len(jobs); i++ {
		for _, r := range groups[i] {
			if progressed[r.ID] {
				jobs[i].Progressed = true
				break
			}
		}
	}
	return jobs, groups
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
	jobs, groups := e.byQueue(refs, 1000)
	miss, err := e.store.Unreserve(ctx, jobs) // unreserve.lua rings
	if err != nil {
		return fmt.Errorf("give back jobs: %w", err)
	}
	return lostError(missed(groups, miss))
}

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
	calls, groups := e.byQueue(refs, 1000)
	started, ok = append([]Reservation(nil), jobs...), make([]bool, len(jobs))
	e.store.Start(ctx, calls, func(c int, got []int64, cerr error) {
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("start jobs of %s: %w", groups[c][0].Queue, cerr))
			return
		}
		for k, r := range groups[c] {
			i := at[r]
			if got[k] > 0 {
				started[i].Token, started[i].Attempts, ok[i] = r.Token, int(got[k]), true
			}
		}
	})
	return started, ok, err
}
