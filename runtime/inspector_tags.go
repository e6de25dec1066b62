package runtime

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Monitored tags (docs/dashboard.md, "Monitored tags"): an operator
// names a tag, and every push of a job carrying it (JobOptions.Tags)
// records the job's ID in a set of that tag and queue, the newest
// MaxTagJobs kept. The list of tags is one set outside any queue's
// slot; each queue holds a copy, its monitored set, which its push
// script reads, so a job with no tags pays nothing and a tagged job one
// check inside its push. MonitorTag writes the copy of every known
// queue; a queue new to the known set copies the list when first
// pushed to.

// maxTagLen bounds a monitored tag, in bytes.
const maxTagLen = 200

func validateTag(tag string) error {
	if tag == "" || len(tag) > maxTagLen || !utf8.ValidString(tag) {
		return fmt.Errorf("%w: a monitored tag must be valid UTF-8 of 1 to %d bytes, not %q", ErrInvalid, maxTagLen, tag)
	}
	return nil
}

// MonitorTag starts monitoring tag: the jobs pushed from now on that
// carry it are recorded, on every queue (TagJobs). It is idempotent.
func (i *Inspector) MonitorTag(ctx context.Context, tag string) error {
	return i.setTag(ctx, tag, true)
}

// UnmonitorTag stops monitoring tag and drops its records of jobs. It is
// idempotent.
func (i *Inspector) UnmonitorTag(ctx context.Context, tag string) error {
	return i.setTag(ctx, tag, false)
}

func (i *Inspector) setTag(ctx context.Context, tag string, add bool) error {
	if err := validateTag(tag); err != nil {
		return err
	}
	queues, err := i.Queues(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, q := range queues {
		names = append(names, i.e.queueNames(q)...)
	}
	if err := i.e.store.SetTag(ctx, tag, names, add); err != nil {
		return fmt.Errorf("monitored tag %q: %w", tag, err)
	}
	return nil
}

// MonitoredTags returns the monitored tags, sorted.
func (i *Inspector) MonitoredTags(ctx context.Context) ([]string, error) {
	tags, err := i.e.store.Members(ctx, i.e.keys.MonitoredTags())
	if err != nil {
		return nil, fmt.Errorf("monitored tags: %w", err)
	}
	slices.Sort(tags)
	return tags, nil
}

// TagState is where a job recorded under a monitored tag is now.
type TagState string

// The states of TaggedJob.
const (
	TagPending   TagState = "pending"   // waiting: ready or delayed
	TagRunning   TagState = "running"   // reserved by a worker
	TagCompleted TagState = "completed" // in its queue's record of finished jobs
	TagFailed    TagState = "failed"    // in the failed store
	// TagGone is a job in none of them: it succeeded on a queue that
	// keeps no record of finished jobs, or was removed.
	TagGone TagState = "gone"
)

// TaggedJob is a job recorded under a monitored tag.
type TaggedJob struct {
	Queue    string // the queue (physical: a partition, for a partitioned queue)
	ID       string
	PushedAt time.Time // by Redis's clock
	State    TagState
}

// TagJobs returns the newest jobs, at most limit (1 to MaxTagJobs),
// recorded under tag on queues (logical names), newest first, with where
// each is now. It reads one set a queue (partition), then, for the
// queues of the jobs returned, one HEXISTS a job and three reads a
// queue.
func (i *Inspector) TagJobs(ctx context.Context, tag string, queues []string, limit int) ([]TaggedJob, error) {
	if err := validateTag(tag); err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), MaxTagJobs)
	var names []string
	for _, q := range queues {
		if err := validateQueueOrPartition(q); err != nil {
			return nil, err
		}
		names = append(names, i.e.queueNames(q)...)
	}
	entries, err := i.e.store.TagJobs(ctx, tag, names, limit)
	if err != nil {
		return nil, fmt.Errorf("jobs of tag %q: %w", tag, err)
	}
	var out []TaggedJob
	for k, es := range entries {
		for _, e := range es {
			out = append(out, TaggedJob{Queue: names[k], ID: e.ID, PushedAt: time.UnixMilli(e.At)})
		}
	}
	slices.SortStableFunc(out, func(a, b TaggedJob) int { return b.PushedAt.Compare(a.PushedAt) })
	out = out[:min(limit, len(out))]
	byQueue := map[string][]int{}
	for k, j := range out {
		byQueue[j.Queue] = append(byQueue[j.Queue], k)
	}
	for _, q := range names {
		idx := byQueue[q]
		if len(idx) == 0 {
			continue
		}
		ids := make([]string, len(idx))
		for x, k := range idx {
			ids[x] = out[k].ID
		}
		places, err := i.e.store.JobPlaces(ctx, i.e.keys.Queue(q), i.e.keys.Finished(q), ids)
		if err != nil {
			return nil, fmt.Errorf("jobs of tag %q: %w", tag, err)
		}
		for x, k := range idx {
			out[k].State = tagStates[places[x]]
		}
	}
	return out, nil
}

var tagStates = map[int]TagState{jobrdb.PlaceGone: TagGone, jobrdb.PlaceQueued: TagPending,
	jobrdb.PlaceReserved: TagRunning, jobrdb.PlaceFinished: TagCompleted, jobrdb.PlaceFailed: TagFailed}
