package console

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// chunk is how many failed jobs a long operation handles per step.
const chunk = 1000

var failedVerb = &verb{
	name:    "queue:failed",
	summary: "List failed jobs, newest first",
	maxArgs: 0,
	about: `List the failed jobs of every queue, or of the queues given with
--queue, newest first: ID, queue, job, attempts, when it failed and the
first line of its error.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		limit := 50
		fs.queuesVar(&queues, "only these queues", "every queue")
		fs.intVar(&limit, "limit", limit, "show at most this many", "")
		return func(ctx context.Context, s *session) error {
			if limit < 1 {
				return usagef("--limit (%d) must be at least 1", limit)
			}
			qs, err := s.queues(ctx, queues)
			if err != nil {
				return err
			}
			return s.listFailed(ctx, qs, limit)
		}
	},
}

func (s *session) listFailed(ctx context.Context, queues []string, limit int) error {
	store := s.ins.Failed()
	var jobs []runtime.FailedJob
	var total int64
	for _, q := range queues {
		n, err := store.Count(ctx, q)
		if err != nil {
			return fmt.Errorf("count failed jobs of %q: %w", q, err)
		}
		total += n
		if n == 0 {
			continue
		}
		page, err := store.List(ctx, q, 0, limit)
		if err != nil {
			return err
		}
		jobs = append(jobs, page...)
	}
	if total == 0 {
		fmt.Fprintln(s.out, "No failed jobs.")
		return nil
	}
	slices.SortFunc(jobs, func(a, b runtime.FailedJob) int {
		if c := b.FailedAt.Compare(a.FailedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	jobs = jobs[:min(len(jobs), limit)]
	tw := table(s.out)
	fmt.Fprintln(tw, "ID\tQUEUE\tJOB\tATTEMPTS\tFAILED AT\tERROR")
	for _, j := range jobs {
		name := j.Name
		if name == "" {
			name = "(undecodable)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.Queue, name, j.Attempts, j.FailedAt.Format(time.DateTime), firstLine(j.Error, 100))
	}
	tw.Flush()
	if int64(len(jobs)) < total {
		fmt.Fprintf(s.out, "Showing %d of %d failed jobs; --limit shows more.\n", len(jobs), total)
	}
	return nil
}

// firstLine returns the first line of s, cut to at most n runes.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		s, cut = string(r[:n-1]), true
	}
	if cut {
		s += "…"
	}
	return s
}

var retryVerb = &verb{
	name:    "queue:retry",
	args:    "[ID... | all]",
	summary: "Push failed jobs back onto their queues",
	maxArgs: -1,
	about: `Push failed jobs back onto their queues, with their attempts reset: the
jobs with the IDs given, every failed job (all), or, with --queue and no
IDs, every failed job of those queues. Retrying all goes oldest first.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "only these queues; with no IDs, retry all of their failed jobs", "every queue")
		return func(ctx context.Context, s *session) error {
			ids := s.args
			all := slices.Contains(ids, "all")
			switch {
			case all && len(ids) > 1:
				return usagef("give failed job IDs or all, not both")
			case len(ids) == 0 && len(queues) == 0:
				return usagef("name the failed jobs to retry: IDs, all, or --queue")
			}
			qs, err := s.queues(ctx, queues)
			if err != nil {
				return err
			}
			if all || len(ids) == 0 {
				return s.retryAll(ctx, qs)
			}
			return s.retryIDs(ctx, qs, dedupe(ids))
		}
	},
}

func (s *session) retryIDs(ctx context.Context, queues, ids []string) error {
	store := s.ins.Failed()
	left := ids
	for _, q := range queues {
		if len(left) == 0 {
			break
		}
		done, err := store.Retry(ctx, q, left...)
		for _, id := range done {
			fmt.Fprintf(s.out, "Retried %s on queue %s.\n", id, q)
		}
		if err != nil {
			return err
		}
		left = slices.DeleteFunc(left, func(id string) bool { return slices.Contains(done, id) })
	}
	return notFound(left)
}

// notFound is the error for failed job IDs that no queue holds.
func notFound(ids []string) error {
	switch len(ids) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("no failed job with ID %s", ids[0])
	}
	return fmt.Errorf("no failed jobs with IDs %s", strings.Join(ids, ", "))
}

// retryAll retries every failed job of queues, oldest first, a chunk at
// a time, and at most as many per queue as it held at the start, so that
// jobs failing again meanwhile are not retried in a loop.
func (s *session) retryAll(ctx context.Context, queues []string) error {
	store := s.ins.Failed()
	counts, total, err := s.countFailed(ctx, queues)
	if err != nil {
		return err
	}
	p := s.progress("retrying", "failed jobs", total, chunk)
	defer p.finish()
	var parts []string
	var retried int64
	for i, q := range queues {
		var n int64
		for n < counts[i] {
			now, err := store.Count(ctx, q)
			if err != nil || now == 0 {
				if err != nil {
					return err
				}
				break
			}
			size := min(chunk, counts[i]-n)
			page, err := store.List(ctx, q, int(max(0, now-size)), int(size))
			if err != nil {
				return err
			}
			ids := make([]string, len(page))
			for j, job := range page {
				ids[len(page)-1-j] = job.ID // oldest first
			}
			done, err := store.Retry(ctx, q, ids...)
			n += int64(len(done))
			p.add(int64(len(done)))
			if err != nil {
				return err
			}
			if len(done) == 0 {
				break
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", q, n))
		}
		retried += n
	}
	p.finish()
	if retried == 0 {
		fmt.Fprintln(s.out, "No failed jobs to retry.")
		return nil
	}
	fmt.Fprintf(s.out, "Retried %d failed %s (%s).\n", retried, plural(retried, "job"), strings.Join(parts, ", "))
	return nil
}

func (s *session) countFailed(ctx context.Context, queues []string) ([]int64, int64, error) {
	counts := make([]int64, len(queues))
	var total int64
	for i, q := range queues {
		n, err := s.ins.Failed().Count(ctx, q)
		if err != nil {
			return nil, 0, fmt.Errorf("count failed jobs of %q: %w", q, err)
		}
		counts[i], total = n, total+n
	}
	return counts, total, nil
}

func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

var forgetVerb = &verb{
	name:    "queue:forget",
	args:    "ID...",
	summary: "Delete failed jobs by ID",
	maxArgs: -1,
	about:   `Delete the failed jobs with the IDs given from the failed store.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "look only in these queues", "every queue")
		return func(ctx context.Context, s *session) error {
			if len(s.args) == 0 {
				return usagef("name the failed jobs to delete by ID")
			}
			qs, err := s.queues(ctx, queues)
			if err != nil {
				return err
			}
			var missing []string
		ids:
			for _, id := range dedupe(s.args) {
				for _, q := range qs {
					n, err := s.ins.Failed().Forget(ctx, q, id)
					if err != nil {
						return err
					}
					if n > 0 {
						fmt.Fprintf(s.out, "Deleted failed job %s of queue %s.\n", id, q)
						continue ids
					}
				}
				missing = append(missing, id)
			}
			return notFound(missing)
		}
	},
}

var flushVerb = &verb{
	name:    "queue:flush",
	summary: "Delete every failed job",
	maxArgs: 0,
	about:   `Delete every failed job of every queue, or of the queues given with --queue.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "only these queues", "every queue")
		return func(ctx context.Context, s *session) error {
			qs, err := s.queues(ctx, queues)
			if err != nil {
				return err
			}
			counts, total, err := s.countFailed(ctx, qs)
			if err != nil {
				return err
			}
			store := s.ins.Failed()
			p := s.progress("deleting", "failed jobs", total, chunk)
			defer p.finish()
			for i, q := range qs {
				// Many jobs go a chunk at a time, which shows progress
				// and keeps each Redis call short; the rest in one go.
				left := counts[i]
				for ; left > chunk; left -= chunk {
					page, err := store.List(ctx, q, 0, chunk)
					if err != nil {
						return err
					}
					ids := make([]string, len(page))
					for j, job := range page {
						ids[j] = job.ID
					}
					if _, err := store.Forget(ctx, q, ids...); err != nil {
						return err
					}
					p.add(int64(len(ids)))
				}
				if err := store.Flush(ctx, q); err != nil {
					return err
				}
				p.add(left)
			}
			p.finish()
			fmt.Fprintf(s.out, "Deleted %d failed %s.\n", total, plural(total, "job"))
			return nil
		}
	},
}

var pruneVerb = &verb{
	name:    "queue:prune-failed",
	summary: "Delete failed jobs older than --hours",
	maxArgs: 0,
	about: `Delete the failed jobs that failed more than --hours ago (by the Redis
clock), of every queue or of the queues given with --queue.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		hours := 24
		fs.intVar(&hours, "hours", hours, "delete failed jobs older than this many hours", "")
		fs.queuesVar(&queues, "only these queues", "every queue")
		return func(ctx context.Context, s *session) error {
			if hours < 0 {
				return usagef("--hours (%d) must not be negative", hours)
			}
			qs, err := s.queues(ctx, queues)
			if err != nil {
				return err
			}
			p := s.progress("pruning", "queues", int64(len(qs)), 1)
			defer p.finish()
			var total int64
			for _, q := range qs {
				n, err := s.ins.Failed().Prune(ctx, q, time.Duration(hours)*time.Hour)
				total += n
				if err != nil {
					return err
				}
				p.add(1)
			}
			p.finish()
			fmt.Fprintf(s.out, "Deleted %d failed %s older than %d %s.\n", total, plural(total, "job"), hours, plural(int64(hours), "hour"))
			return nil
		}
	},
}
