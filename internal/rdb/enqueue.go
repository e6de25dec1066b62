package rdb

import (
	"context"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/send"
)

// MaxEnqueue is the most jobs one enqueue step takes (lib/enqueue.lua):
// one push call's, send.Chunk, so that a push is one step.
const MaxEnqueue = send.Chunk

// The widths of an enqueue step's jobs: how many arguments each takes.
const (
	// WidthPlain is ID, payload: jobs of no group, all with the step's
	// delay.
	WidthPlain = 2
	// WidthGrouped is ID, payload, group: all with the step's delay.
	WidthGrouped = 3
	// WidthEach is ID, payload, delay ms, group.
	WidthEach = 4
)

// Enqueue is the enqueue step of a script call that adds new jobs to one
// queue: its keys and its jobs, as lib/enqueue.lua takes them. Every way
// a job enters a queue builds one (push, chain_push, outbox_push,
// schedule_tick, debounce, retry), so that each honours the same options:
// ready or delayed, the fair group and its limit, the doorbell.
type Enqueue struct {
	// Queue is the (physical) queue's keys.
	Queue keyspace.QueueKeys
	// Width is how many arguments each job takes (WidthPlain,
	// WidthGrouped, WidthEach).
	Width int
	// Delay is every job's delay in ms, for WidthPlain and WidthGrouped.
	Delay int64
	// Jobs holds Width arguments a job: ID, payload, [delay,] [group]; a
	// group is "<limit>:<group>", or "" for none.
	Jobs []any
	// Tags holds each job's tags, in the order of Jobs (nil or shorter
	// for jobs with none), so that the step records the jobs carrying a
	// tag monitored on the queue (QueueKeys.TagJobs); nil when no job has
	// tags: the step then passes no key or argument for them.
	Tags [][]string
	// TagBound is how many jobs each TagJobs set keeps, the newest.
	TagBound int

	groups bool // a job has a group
}

// tagged reports whether a job of the step has tags.
func (q *Enqueue) tagged() bool {
	for _, t := range q.Tags {
		if len(t) > 0 {
			return true
		}
	}
	return false
}

// Len is the number of jobs.
func (q *Enqueue) Len() int {
	if q.Width == 0 {
		return 0
	}
	return len(q.Jobs) / q.Width
}

// Grouped reports whether the step passes the group keys: whether a job
// of it has a group.
func (q *Enqueue) Grouped() bool { return q.groups || q.Width == WidthGrouped }

// Add adds a job. group is "" for none; delay is the job's own, kept
// only at WidthEach.
func (q *Enqueue) Add(id string, payload any, delay int64, group string) {
	if group != "" {
		q.groups = true
	}
	switch q.Width {
	case WidthPlain:
		q.Jobs = append(q.Jobs, id, payload)
	case WidthGrouped:
		q.Jobs = append(q.Jobs, id, payload, group)
	default:
		q.Jobs = append(q.Jobs, id, payload, delay, group)
	}
}

// Keys returns lead followed by the step's keys: ready, delayed,
// payloads, notify, and for a grouped step reserved and the group keys.
//
// A step with tagged jobs then passes the queue's monitored set and, per
// tagged job in order, the TagJobs set of each of its tags.
func (q *Enqueue) Keys(lead ...string) []string {
	qk := &q.Queue
	if !q.Grouped() {
		lead = append(lead, qk.Ready, qk.Delayed, qk.Payloads, qk.Notify)
	} else {
		lead = append(lead, qk.Ready, qk.Delayed, qk.Payloads, qk.Notify, qk.Reserved,
			qk.GroupOf, qk.GroupWait, qk.GroupRing, qk.GroupActive, qk.GroupSeq, qk.GroupRunning)
	}
	if q.Tags == nil || !q.tagged() {
		return lead
	}
	lead = append(lead, qk.Monitored)
	for _, tags := range q.Tags {
		for _, t := range tags {
			lead = append(lead, qk.TagJobs(t))
		}
	}
	return lead
}

// Args returns lead followed by the step's arguments: the number of
// jobs, the width, the delay, then the jobs; then, for a step with tagged
// jobs, the number of them, TagBound, and for each its index (from 1),
// its number of tags and its tags.
func (q *Enqueue) Args(lead ...any) []any {
	out := make([]any, 0, len(lead)+3+len(q.Jobs))
	out = append(out, lead...)
	out = append(out, q.Len(), q.Width, q.Delay)
	out = append(out, q.Jobs...)
	if q.Tags == nil || !q.tagged() {
		return out
	}
	n := 0
	for _, tags := range q.Tags {
		if len(tags) > 0 {
			n++
		}
	}
	out = append(out, n, max(q.TagBound, 1))
	for i, tags := range q.Tags {
		if len(tags) == 0 {
			continue
		}
		out = append(out, i+1, len(tags))
		for _, t := range tags {
			out = append(out, t)
		}
	}
	return out
}

// AddQueue adds queue to the set of known queues, and reports whether
// it is new to it.
func (s *Store) AddQueue(ctx context.Context, queue string) (bool, error) {
	n, err := s.c.SAdd(ctx, s.keys.Queues(), queue).Result()
	return n == 1, err
}

// Replicas is how many replicas must acknowledge a push, and for how
// long to wait (send.Replicas); N 0 waits for none.
type Replicas = send.Replicas

// Pushed runs the script calls of a push in one pipeline, then WAITs for
// r's replicas (send.Pushed), and returns each call's error.
func (s *Store) Pushed(ctx context.Context, calls []Call, r Replicas) []error {
	return send.Pushed(ctx, s.c, calls, r)
}

// PushedReplies is Pushed that also returns each call's reply.
func (s *Store) PushedReplies(ctx context.Context, calls []Call, r Replicas) ([]Reply, []error) {
	return send.PushedReplies(ctx, s.c, calls, r)
}
