package dashboard

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// The Recent page lists jobs across queues, newest first: those waiting
// to run (the head of each queue's ready list), those that succeeded
// (the record of finished jobs of queues with EngineConfig.KeepFinished)
// and those in the failed store. It reads at most recentQueues
// partitions a page (a queue of none counts as one), and recentPerQueue
// jobs of each, so that its cost does not grow with the number of jobs,
// queues or partitions; further queues, or further partitions of a
// queue, are on the next pages.

const recentPerQueue = 5

// recentKinds are the Recent page's tabs.
var recentKinds = []string{"completed", "failed", "pending"}

// recentRow is one job on the Recent page.
type recentRow struct {
	Queue, ID, Name, State string
	At                     time.Time // finished, failed or dispatched
	Attempts               int
	Runtime                time.Duration
	Error                  string
	Tags                   []string
	Sealed                 bool
}

func (h *handler) recent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	kind := r.URL.Query().Get("kind")
	if !slices.Contains(recentKinds, kind) {
		kind = recentKinds[0]
	}
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	// A window of recentQueues partitions (a queue of none counts as
	// one), each read alone, so that a queue of many partitions is read
	// over several pages, which say which partitions they read.
	these, win := partitionWindow(r, queues, h.ins.QueuePartitions, recentQueues)
	ins := h.ins.PerPartition()
	var rows []recentRow
	for _, q := range these {
		for _, part := range q.Parts {
			got, err := recentOf(ctx, ins, kind, q.Queue, part)
			if err != nil {
				h.fail(w, r, http.StatusBadGateway, err)
				return
			}
			rows = append(rows, got...)
		}
	}
	slices.SortStableFunc(rows, func(a, b recentRow) int { return b.At.Compare(a.At) })
	data := map[string]any{"Kind": kind, "Kinds": recentKinds, "Rows": rows, "Queues": win.Of,
		"From": win.From, "To": win.To, "Split": win.Split, "PerQueue": recentPerQueue, "Prev": win.Prev, "Next": win.Next}
	h.render(w, r, "recent", "Recent jobs", data, kind != "pending")
}

// recentOf reads the newest jobs of kind of partition part of queue q
// (q itself for a queue of none), through ins, Inspector.PerPartition.
func recentOf(ctx context.Context, ins *runtime.Inspector, kind, q, part string) ([]recentRow, error) {
	var out []recentRow
	switch kind {
	case "completed":
		jobs, _, err := ins.FinishedJobs(ctx, part, runtime.FinishedQuery{Limit: recentPerQueue})
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			out = append(out, recentRow{Queue: q, ID: j.ID, Name: j.Name, State: "finished", At: j.FinishedAt, Attempts: j.Attempts, Runtime: j.Runtime, Tags: j.Tags})
		}
	case "failed":
		jobs, err := ins.Failed().List(ctx, part, 0, recentPerQueue)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			v := readJobHead(q, j.ID, runtime.StateFailed, j.Payload)
			state := "failed"
			if j.Cancelled {
				state = "cancelled"
			}
			out = append(out, recentRow{Queue: q, ID: j.ID, Name: cmpOr(v.Name, j.Name), State: state, At: j.FailedAt, Attempts: j.Attempts, Error: cutUTF8(errorGist(j.Error), 300), Tags: v.Tags, Sealed: v.Sealed})
		}
	case "pending":
		jobs, groups, _, err := listJobsOf(ctx, ins, part, runtime.StateReady, 0, recentPerQueue)
		if err != nil {
			return nil, err
		}
		for i, j := range jobs {
			v := readJobHead(q, j.ID, j.State, j.Payload)
			state := "ready"
			if groups[i] != "" {
				state = "grouped"
			}
			out = append(out, recentRow{Queue: q, ID: j.ID, Name: v.Name, State: state, At: v.Dispatched, Attempts: j.Attempts, Tags: v.Tags, Sealed: v.Sealed})
		}
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
