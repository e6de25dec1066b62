package console

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobgen/jobgen/runtime"
)

var cancelVerb = &verb{
	name:    "queue:cancel",
	args:    "ID",
	summary: "Cancel a waiting, delayed or running job",
	maxArgs: 1,
	about: `Cancel the job with the ID given. A waiting or delayed job leaves its
queue; a running job's worker is told at once and cancels its context
(or, if the note misses it, at its next heartbeat, within a third of its
RetryAfter). Either way the job goes to the failed store, marked
cancelled, and is not tried again; its batch counts it as failed and its
chain goes no further. The cancel acts only on the attempt
it sees (or the one named with --attempt): a job reserved again meanwhile
is left alone, and the command says so.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		var attempt int
		fs.queuesVar(&queues, "look only in these queues", "every queue")
		fs.intVar(&attempt, "attempt", 0, "cancel only if the job is still at this attempt count (as the dashboard shows it)", "the attempt found")
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the job to cancel by ID")
			}
			id := s.args[0]
			q, job, ok, err := s.findJob(ctx, queues, id)
			switch {
			case err != nil:
				return err
			case !ok:
				return fmt.Errorf("no waiting, delayed or running job with ID %s (it may have finished)", id)
			case job.State == runtime.StateFailed:
				return fmt.Errorf("job %s of queue %s is in the failed store already; nothing to cancel", id, q)
			}
			seen := job.Attempts
			if flagSet(fs, "attempt") {
				if attempt < 0 {
					return usagef("--attempt (%d) must not be negative: give the job's attempt count as queue:job or the dashboard shows it (%d now), or leave --attempt out to cancel the attempt found", attempt, job.Attempts)
				}
				seen = attempt
			}
			return s.cancel(ctx, q, id, seen)
		}
	},
}

func (s *session) cancel(ctx context.Context, queue, id string, seen int) error {
	c, err := s.ins.Cancel(ctx, queue, id, seen)
	var stale *runtime.StaleCancelError
	switch {
	case errors.As(err, &stale) && stale.Seen > stale.Now:
		return fmt.Errorf("job %s of queue %s is at attempt %d, and has not reached attempt %d: give the attempt count queue:job or the dashboard shows, or leave --attempt out; nothing changed", id, queue, stale.Now, stale.Seen)
	case errors.As(err, &stale):
		return fmt.Errorf("job %s of queue %s is at attempt %d now, not %d: it was reserved again; nothing changed", id, queue, stale.Now, stale.Seen)
	case errors.Is(err, runtime.ErrNoJob):
		return fmt.Errorf("job %s of queue %s finished before the cancel; nothing changed", id, queue)
	case errors.Is(err, runtime.ErrJobFailed):
		return fmt.Errorf("job %s of queue %s is in the failed store already; nothing to cancel", id, queue)
	case err != nil:
		return err
	}
	switch c.Was {
	case runtime.StateReserved:
		if c.Told {
			fmt.Fprintf(s.out, "Cancelled running job %s of queue %s (attempt %d); its worker was told to stop it now.\n", id, queue, c.Attempts)
		} else {
			fmt.Fprintf(s.out, "Cancelled running job %s of queue %s (attempt %d); its worker stops it at its next heartbeat.\n", id, queue, c.Attempts)
		}
	default:
		fmt.Fprintf(s.out, "Cancelled %s job %s of queue %s.\n", c.Was, id, queue)
	}
	return nil
}
