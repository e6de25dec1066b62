package console

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

var jobVerb = &verb{
	name:    "queue:job",
	args:    "ID",
	summary: "Show a job: its state, attempts, progress and attempts' errors",
	maxArgs: 1,
	about: `Show the job with the ID given, wherever it is: ready, delayed,
reserved (running) or failed. It prints the job's name, state and
attempts, how far it got as its handler last reported it
(runtime.Progress), and the errors of its last attempts, with their times.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "look only in these queues", "every queue")
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the job to show by ID")
			}
			id := s.args[0]
			_, job, ok, err := s.findJob(ctx, queues, id)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no job with ID %s (it may have finished)", id)
			}
			return s.showJob(ctx, job)
		}
	},
}

// findJob looks for the job with id in queues (every queue if none),
// and returns the queue it is in.
func (s *session) findJob(ctx context.Context, queues []string, id string) (string, runtime.QueuedJob, bool, error) {
	qs, err := s.queues(ctx, queues)
	if err != nil {
		return "", runtime.QueuedJob{}, false, err
	}
	for _, q := range qs {
		job, ok, err := s.ins.FindJob(ctx, q, id)
		if err != nil || ok {
			return q, job, ok, err
		}
	}
	return "", runtime.QueuedJob{}, false, nil
}

// showJob prints job as queue:job shows it.
func (s *session) showJob(ctx context.Context, job runtime.QueuedJob) error {
	name := "?"
	if env, err := runtime.DecodeEnvelope(job.Queue, job.ID, job.Payload); err == nil {
		name = env.Name
	}
	errs := job.Errors
	w := table(s.out)
	fmt.Fprintf(w, "Job\t%s\n", job.ID)
	fmt.Fprintf(w, "Name\t%s\n", name)
	fmt.Fprintf(w, "Queue\t%s\n", job.Queue)
	state := string(job.State)
	switch {
	case job.State == runtime.StateReserved && !job.Due.IsZero():
		state += " (lease until " + job.Due.UTC().Format(time.RFC3339) + ")"
	case job.State == runtime.StateDelayed:
		state += " (due " + job.Due.UTC().Format(time.RFC3339) + ")"
	}
	attempts := job.Attempts
	if job.State == runtime.StateFailed {
		f, ok, err := s.ins.Failed().Get(ctx, job.Queue, job.ID)
		if err != nil {
			return err
		}
		if ok {
			if f.Cancelled {
				state += ", cancelled"
			}
			state += " at " + f.FailedAt.UTC().Format(time.RFC3339)
			attempts, errs = f.Attempts, f.Errors
			if name == "?" && f.Name != "" {
				name = f.Name
			}
			fmt.Fprintf(w, "Error\t%s\n", oneLineText(f.Error))
		}
	}
	fmt.Fprintf(w, "State\t%s\n", state)
	fmt.Fprintf(w, "Attempts\t%d", attempts)
	if job.Exceptions > 0 {
		fmt.Fprintf(w, " (%d %s)", job.Exceptions, plural(int64(job.Exceptions), "exception"))
	}
	fmt.Fprintln(w)
	if p := job.Progress; p != nil {
		fmt.Fprintf(w, "Progress\t%d%%", p.Percent)
		if p.Note != "" {
			fmt.Fprintf(w, " %s", oneLineText(p.Note))
		}
		fmt.Fprintf(w, " (at %s, attempt %d)\n", p.At.UTC().Format(time.RFC3339), p.Attempt)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(errs) > 0 {
		fmt.Fprintln(s.out, "\nAttempts' errors:")
		w = table(s.out)
		for _, e := range errs {
			at := "-"
			if !e.At.IsZero() {
				at = e.At.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "  %d\t%s\t%s\n", e.Attempt, at, oneLineText(e.Error))
		}
		return w.Flush()
	}
	return nil
}
