package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// groupSeqDigits is the width of the sequence number in a member of a
// queue's group wait set: "<group>\x00<seq>" + job ID (internal/keyspace).
const groupSeqDigits = 16

// groupWaitWhole is the most jobs waiting in a queue's groups that
// OldestGrouped reads, in one command (about 50 bytes each), for their
// groups' heads. Past it, the groups that sort after those jobs are not
// read, and GroupedWait.Partial says so: the commands stay two whatever
// the number of groups.
const groupWaitWhole = 1000

// groupRingRead is how many groups of the ring of turns OldestGrouped
// looks at.
const groupRingRead = 100

// ListGroupedJobs returns a page of the jobs of queue waiting in fair
// groups for their group's turn (docs/flow-control.md), from offset, at
// most limit, and how many wait so. They are ready jobs that ListJobs
// does not list, as they are not in the ready list; Sizes counts them
// with the ready ones. The page is in order of group name, and in each
// group in the order its jobs will be taken; a job's Group tells its
// group. A partitioned queue is read one partition after another.
func (i *Inspector) ListGroupedJobs(ctx context.Context, queue string, offset, limit int) ([]WaitingGroupJob, int64, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, 0, err
	}
	if offset < 0 || limit < 1 {
		return nil, 0, fmt.Errorf("%w: list grouped jobs: offset (%d) must be >= 0 and limit (%d) >= 1", ErrInvalid, offset, limit)
	}
	if out, total, ok, err := pageOfPartitions(e, queue, offset, limit, func(pi *Inspector, name string, offset int) ([]WaitingGroupJob, int64, error) {
		return pi.ListGroupedJobs(ctx, name, offset, limit)
	}); ok {
		if err != nil {
			return nil, 0, err
		}
		return out, total, nil
	}
	qk := e.keys.Queue(queue)
	total, members, _, err := e.store.SetPage(ctx, qk.GroupWait, int64(offset), int64(offset+limit-1))
	if err != nil {
		return nil, 0, fmt.Errorf("list grouped jobs of %q: %w", queue, err)
	}
	ids := make([]string, 0, len(members))
	groups := make([]string, 0, len(members))
	for _, m := range members {
		g, rest, ok := strings.Cut(m, "\x00")
		if !ok || len(rest) <= groupSeqDigits {
			continue // not a member the scripts write
		}
		groups = append(groups, g)
		ids = append(ids, rest[groupSeqDigits:])
	}
	jobs, err := e.loadJobs(ctx, queue, StateReady, ids, nil)
	if err != nil {
		return nil, 0, err
	}
	out := make([]WaitingGroupJob, len(jobs))
	for k, j := range jobs {
		out[k] = WaitingGroupJob{QueuedJob: j, Group: groups[k]}
	}
	return out, total, nil
}

// WaitingGroupJob is a ready job waiting in its fair group for its
// group's turn, as ListGroupedJobs reads it.
type WaitingGroupJob struct {
	QueuedJob
	// Group is the fair group it waits in.
	Group string
}

// OldestGrouped returns when the longest-waiting job at the head of one
// of queue's fair groups was dispatched, by its ID, among the first
// groups of the ring of turns (at most 100) whose jobs are among the
// first 1,000 waiting in groups, by group name; ok is false if none has
// a job waiting. It is the grouped jobs' counterpart of OldestReady, and
// OldestGroupedWait without its Partial flag.
func (i *Inspector) OldestGrouped(ctx context.Context, queue string) (at time.Time, ok bool, err error) {
	w, err := i.OldestGroupedWait(ctx, queue)
	return w.At, w.OK, err
}

// GroupedWait is the longest-waiting job at the head of a queue's fair
// groups, as OldestGroupedWait reads it.
type GroupedWait struct {
	// At is when the job was dispatched, by its ID; zero if OK is false.
	At time.Time
	// OK is false if no group read has a job waiting.
	OK bool
	// Partial is true when more than 1,000 jobs wait in the queue's
	// groups and some groups of the ring, those whose names sort after
	// the groups of the first 1,000, were not read: a job of theirs may
	// have waited longer, and the longest wait is at least since At
	// (when OK), not exactly.
	Partial bool
}

// OldestGroupedWait reads the job at the head of each of the first
// groups of queue's ring of turns (at most 100), and returns the oldest,
// in one round trip of two commands whatever the number of groups or of
// jobs: the ring, and the first 1,000 jobs waiting in groups (members
// sort by group name, then by turn), whose groups' heads are among
// them. Past 1,000 jobs the groups after them are not read, and the
// answer says so (Partial). A partitioned queue answers with the oldest
// of its partitions' heads, Partial if any partition's is: two commands
// a partition.
func (i *Inspector) OldestGroupedWait(ctx context.Context, queue string) (GroupedWait, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return GroupedWait{}, err
	}
	partial := false
	if at, ok, partitioned, err := e.oldestOfPartitions(queue, func(pi *Inspector, name string) (time.Time, bool, error) {
		w, err := pi.OldestGroupedWait(ctx, name)
		partial = partial || w.Partial
		return w.At, w.OK, err
	}); partitioned {
		return GroupedWait{At: at, OK: ok, Partial: partial}, err
	}
	qk := e.keys.Queue(queue)
	heads, partial, err := e.store.GroupWaitHeads(ctx, qk, groupRingRead, groupWaitWhole)
	if err != nil {
		return GroupedWait{}, fmt.Errorf("oldest grouped job of %q: %w", queue, err)
	}
	w := GroupedWait{Partial: partial}
	for _, m := range heads {
		_, rest, found := strings.Cut(m, "\x00")
		if !found || len(rest) <= groupSeqDigits {
			continue
		}
		if ms, good := idTime(rest[groupSeqDigits:]); good && (!w.OK || ms < w.At.UnixMilli()) {
			w.At, w.OK = time.UnixMilli(ms), true
		}
	}
	return w, nil
}
