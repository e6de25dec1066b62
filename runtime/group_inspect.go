package runtime

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jobgen/jobgen/internal/keyspace"
)

// GroupInfo is one fair group of a queue (docs/flow-control.md).
type GroupInfo struct {
	// Name is the group.
	Name string
	// Waiting counts its jobs waiting for their turn.
	Waiting int64
	// Running counts its jobs under lease that hold a slot of its
	// GroupLimit; 0 for a group without a limit.
	Running int64
	// Parked is set when the group has waiting jobs but is off the ring
	// of turns: it is at its limit.
	Parked bool
}

// QueueGroups is what Inspector.Groups reads of a queue's fair groups.
type QueueGroups struct {
	// Waiting counts every grouped job waiting for its group's turn.
	Waiting int64
	// Turns counts the groups on the ring of turns.
	Turns int64
	// Groups are the groups on the ring (up to the number asked for),
	// and those with jobs holding a slot of their limit, most waiting
	// first.
	Groups []GroupInfo
}

// Groups reads queue's fair groups: the jobs waiting in groups, and up
// to max groups with their waiting and running jobs, in one round trip
// and one more for the groups' counts. It only reads.
func (i *Inspector) Groups(ctx context.Context, queue string, max int) (QueueGroups, error) {
	e := i.e
	if err := ValidateQueueName(queue); err != nil {
		return QueueGroups{}, err
	}
	qk := e.keys.Queue(queue)
	r, err := e.store.GroupRing(ctx, qk, max)
	if err != nil {
		return QueueGroups{}, fmt.Errorf("read the groups of %q: %w", queue, err)
	}
	out := QueueGroups{Waiting: r.Waiting, Turns: r.Turns}
	onRing := map[string]bool{}
	var names []string
	for _, g := range r.Ring {
		if !onRing[g] {
			onRing[g] = true
			names = append(names, g)
		}
	}
	seen := map[string]bool{}
	for _, m := range r.Running {
		g, _, _ := strings.Cut(m, "\x00")
		if !onRing[g] && !seen[g] && len(names) < 2*max {
			seen[g] = true
			names = append(names, g)
		}
	}
	counts, err := e.store.GroupJobs(ctx, qk, names)
	if err != nil {
		return QueueGroups{}, fmt.Errorf("read the groups of %q: %w", queue, err)
	}
	for k, g := range names {
		w, r := counts[k][0], counts[k][1]
		out.Groups = append(out.Groups, GroupInfo{Name: g, Waiting: w, Running: r, Parked: w > 0 && !onRing[g]})
	}
	sort.SliceStable(out.Groups, func(a, b int) bool { return out.Groups[a].Waiting > out.Groups[b].Waiting })
	return out, nil
}

// GroupCounts are a queue's fair-group counts, as GroupCountsOf reads
// them.
type GroupCounts struct {
	// Waiting counts the jobs waiting in groups.
	Waiting int64
	// Turns counts the groups on the ring of turns.
	Turns int64
	// Running counts the jobs holding a slot of their group's limit.
	Running int64
}

// GroupCountsOf reads the fair-group counts of queues in one round trip:
// three reads per queue, for a metrics scrape. A queue without grouped
// jobs has zero counts.
func (i *Inspector) GroupCountsOf(ctx context.Context, queues []string) (map[string]GroupCounts, error) {
	e := i.e
	for _, q := range queues {
		if err := ValidateQueueName(q); err != nil {
			return nil, err
		}
	}
	qks := make([]keyspace.QueueKeys, len(queues))
	for k, q := range queues {
		qks[k] = e.keys.Queue(q)
	}
	cmds, err := e.store.GroupTotals(ctx, qks)
	if err != nil {
		return nil, fmt.Errorf("read the groups of %d queues: %w", len(queues), err)
	}
	out := make(map[string]GroupCounts, len(queues))
	for k, q := range queues {
		out[q] = GroupCounts{Waiting: cmds[k][0], Turns: cmds[k][1], Running: cmds[k][2]}
	}
	return out, nil
}
