package runtime

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// NewerJobs are the jobs of one name and schema version that a worker
// gave back because the version is newer than it knows: they wait for a
// newer worker, as they should for a moment in a rolling deploy. Jobs
// that keep waiting mean no worker of their version runs.
type NewerJobs struct {
	Queue string `json:"queue"`
	Name  string `json:"name"`
	// Version is the jobs' schema version; Known is the newest the
	// worker knows.
	Version int `json:"version"`
	Known   int `json:"known"`
	// GivenBack counts the give-backs since the worker started; LastAt
	// is the last one (the worker's clock).
	GivenBack int64     `json:"given_back"`
	LastAt    time.Time `json:"last_at"`
}

// newerWaiting keeps a worker's NewerJobs for its record.
type newerWaiting struct {
	mu   sync.Mutex
	jobs map[newerKey]*NewerJobs
}

type newerKey struct {
	queue, name string
	version     int
}

// noteNewer records one give-back of a job of a newer schema version.
func (w *Worker) noteNewer(queue, name string, version, known int) {
	n := &w.waitingNewer
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.jobs == nil {
		n.jobs = map[newerKey]*NewerJobs{}
	}
	k := newerKey{queue, name, version}
	j := n.jobs[k]
	if j == nil {
		j = &NewerJobs{Queue: queue, Name: name, Version: version, Known: known}
		n.jobs[k] = j
	}
	j.GivenBack++
	j.LastAt = time.Now()
}

// list returns the recorded give-backs, by queue, name and version.
func (n *newerWaiting) list() []NewerJobs {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]NewerJobs, 0, len(n.jobs))
	for _, j := range n.jobs {
		out = append(out, *j)
	}
	slices.SortFunc(out, func(a, b NewerJobs) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Version, b.Version))
	})
	return out
}

// WaitingForNewer returns, from the live workers' records, the jobs
// given back for a newer worker within the last window: by queue, name
// and version, with their give-backs summed over the workers. An entry
// means a job of that version was reserved by a worker that does not
// know it and went back to wait; one that stays means no worker that
// knows the version is running. queue:monitor shows them.
func (i *Inspector) WaitingForNewer(ctx context.Context, window time.Duration) ([]NewerJobs, error) {
	workers, err := i.Workers(ctx)
	if err != nil {
		return nil, err
	}
	since := time.Now().Add(-window)
	sum := map[newerKey]*NewerJobs{}
	for _, w := range workers {
		for _, j := range w.Newer {
			if j.LastAt.Before(since) {
				continue
			}
			k := newerKey{j.Queue, j.Name, j.Version}
			s := sum[k]
			if s == nil {
				c := j
				sum[k] = &c
				continue
			}
			s.GivenBack += j.GivenBack
			s.Known = max(s.Known, j.Known)
			if j.LastAt.After(s.LastAt) {
				s.LastAt = j.LastAt
			}
		}
	}
	out := make([]NewerJobs, 0, len(sum))
	for _, j := range sum {
		out = append(out, *j)
	}
	slices.SortFunc(out, func(a, b NewerJobs) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Version, b.Version))
	})
	return out, nil
}
