package dashboard

import (
	"context"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// A queue's ready jobs are in two places: its ready list, and its fair
// groups' wait set (docs/flow-control.md), whose jobs wait for their
// group's turn. Sizes counts both as ready; the pages list both, the
// ready list's first.

// listJobs is Inspector.ListJobs, with the ready state's page running on
// from the ready list into the jobs waiting in groups; group[k] is the
// group of jobs[k] ("" for one in the ready list).
func (h *handler) listJobs(ctx context.Context, q string, state runtime.JobState, offset, limit int) (jobs []runtime.QueuedJob, group []string, total int64, err error) {
	return listJobsOf(ctx, h.ins, q, state, offset, limit)
}

// listJobsOf is listJobs through ins: through Inspector.PerPartition,
// of one partition of a queue.
func listJobsOf(ctx context.Context, ins *runtime.Inspector, q string, state runtime.JobState, offset, limit int) (jobs []runtime.QueuedJob, group []string, total int64, err error) {
	jobs, total, err = ins.ListJobs(ctx, q, state, offset, limit)
	if err != nil || state != runtime.StateReady {
		return jobs, make([]string, len(jobs)), total, err
	}
	group = make([]string, len(jobs))
	from := max(offset-int(total), 0)
	grouped, n, err := ins.ListGroupedJobs(ctx, q, from, max(limit-len(jobs), 1))
	if err != nil {
		return nil, nil, 0, err
	}
	if len(jobs) < limit {
		for _, g := range grouped[:min(len(grouped), limit-len(jobs))] {
			jobs = append(jobs, g.QueuedJob)
			group = append(group, g.Group)
		}
	}
	return jobs, group, total + n, nil
}

// oldestWaiting is when the longest-waiting job of q, at the head of its
// ready list or of one of its fair groups, was dispatched, read through
// ins. st says where jobs wait: a place that holds none is not read.
// atLeast is true when not every group's head was read
// (runtime.GroupedWait.Partial): the wait is at least since at.
func (h *handler) oldestWaiting(ctx context.Context, ins *runtime.Inspector, q string, st runtime.QueueState) (at time.Time, ok, atLeast bool, err error) {
	if st.Ready > st.Grouped {
		if at, ok, err = ins.OldestReady(ctx, q); err != nil {
			return at, ok, false, err
		}
	}
	if st.Grouped == 0 {
		return at, ok, false, nil
	}
	g, err := ins.OldestGroupedWait(ctx, q)
	if err != nil {
		return at, ok, false, err
	}
	if g.OK && (!ok || g.At.Before(at)) {
		at, ok = g.At, true
	}
	return at, ok, g.Partial, nil
}
