package console

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

var workflowVerb = &verb{
	name:    "queue:workflow",
	args:    "ID",
	summary: "Show a workflow: its state and each step's",
	maxArgs: 1,
	about: `Show the workflow with the ID given (runtime.Inspector.Workflow): its
state, and why it failed or was cancelled, when it was created, ended
and is due to end, then a table of its steps in the order of their IDs,
spawned steps after their spawner: each step's job name, queue and job
ID (for queue:job), its state (waiting for its parents, released to its
queue, succeeded, failed, or dropped when the workflow ended before it
ran), the steps whose results it needs and those it only waits for, and
the size of its result. queue:workflow-cancel and queue:workflow-retry
act on it.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the workflow to show by ID")
			}
			w, err := s.ins.Workflow(ctx, s.args[0])
			if err != nil {
				return workflowError(s.args[0], err)
			}
			return s.showWorkflow(w)
		}
	},
}

var workflowCancelVerb = &verb{
	name:    "queue:workflow-cancel",
	args:    "ID",
	summary: "Cancel a running workflow",
	maxArgs: 1,
	about: `Cancel the workflow with the ID given (runtime.Inspector.CancelWorkflow):
its waiting steps are dropped, its queued ones taken out of their
queues, its running ones cancelled as queue:cancel does, and its catch
callback runs. A workflow that has ended is left as it is, and the
command says so. queue:workflow-retry runs it again from the steps that
did not succeed.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the workflow to cancel by ID")
			}
			id := s.args[0]
			if err := s.ins.CancelWorkflow(ctx, id); err != nil {
				return workflowError(id, err)
			}
			fmt.Fprintf(s.out, "Cancelled workflow %s.\n", oneLineText(id))
			return nil
		}
	},
}

var workflowRetryVerb = &verb{
	name:    "queue:workflow-retry",
	args:    "ID",
	summary: "Run a failed or cancelled workflow again from the steps that did not succeed",
	maxArgs: 1,
	about: `Run the failed or cancelled workflow with the ID given again
(runtime.Inspector.RetryWorkflow): each step that failed or was dropped
gets a new job, and those whose parents all succeeded are pushed at
once. The steps that succeeded keep their results and do not run again.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the workflow to retry by ID")
			}
			id := s.args[0]
			if err := s.ins.RetryWorkflow(ctx, id); err != nil {
				return workflowError(id, err)
			}
			w, err := s.ins.WorkflowGraph(ctx, id)
			if err != nil {
				return workflowError(id, err)
			}
			fmt.Fprintf(s.out, "Retried workflow %s: %s.\n", oneLineText(id), stepCounts(w.Steps))
			return nil
		}
	},
}

// workflowError says what err means for workflow id.
func workflowError(id string, err error) error {
	id = oneLineText(id)
	switch {
	case errors.Is(err, runtime.ErrNoWorkflow):
		return fmt.Errorf("no workflow with ID %s (unknown, or ended longer ago than EngineConfig.WorkflowRetention, 24h by default)", id)
	case errors.Is(err, runtime.ErrWorkflowEnded):
		return fmt.Errorf("%s; nothing changed", oneLine(err))
	case errors.Is(err, runtime.ErrInvalid):
		return usagef("%s", oneLine(err))
	}
	return err
}

// showWorkflow prints w as queue:workflow shows it.
func (s *session) showWorkflow(w *runtime.WorkflowInfo) error {
	tw := table(s.out)
	fmt.Fprintf(tw, "Workflow\t%s\n", oneLineText(w.ID))
	state := w.State.Word()
	if w.Why != "" {
		state += ": " + oneLineText(w.Why)
	}
	fmt.Fprintf(tw, "State\t%s\n", state)
	policy := "fail: a failed step fails the workflow"
	if w.Policy == runtime.ContinueWorkflow {
		policy = "continue: a failed step does not stop the others"
	}
	fmt.Fprintf(tw, "On failure\t%s\n", policy)
	fmt.Fprintf(tw, "Created\t%s\n", stampOr(w.CreatedAt, "-"))
	fmt.Fprintf(tw, "Ended\t%s\n", stampOr(w.EndedAt, "-"))
	fmt.Fprintf(tw, "Deadline\t%s\n", stampOr(w.Deadline, "none"))
	fmt.Fprintf(tw, "Steps\t%s\n", stepCounts(w.Steps))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(s.out)
	tw = table(s.out)
	fmt.Fprintln(tw, "STEP\tJOB\tQUEUE\tJOB ID\tSTATE\tNEEDS\tWAITS\tRESULT")
	for _, st := range w.Steps {
		state := string(st.State)
		if st.MayFail {
			state += ",may-fail"
		}
		result := "-"
		if st.HasResult {
			result = fmt.Sprintf("%d B", st.ResultSize)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", oneLineText(st.ID), dash(oneLineText(st.Name)), dash(oneLineText(st.Queue)),
			dash(st.JobID), state, dash(strings.Join(st.Needs, ",")), dash(strings.Join(st.Waits, ",")), result)
	}
	return tw.Flush()
}

// stepCounts is "5 steps: 2 succeeded, 1 failed, 2 dropped", the states
// in the order a step goes through them.
func stepCounts(steps []runtime.WorkflowStepInfo) string {
	n := map[runtime.StepState]int{}
	for _, s := range steps {
		n[s.State]++
	}
	var parts []string
	for _, st := range []runtime.StepState{runtime.StepWaiting, runtime.StepReleased, runtime.StepSucceeded, runtime.StepFailed, runtime.StepDropped} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	out := fmt.Sprintf("%d %s", len(steps), plural(int64(len(steps)), "step"))
	if len(parts) > 0 {
		out += ": " + strings.Join(parts, ", ")
	}
	return out
}

func stampOr(t time.Time, none string) string {
	if t.IsZero() {
		return none
	}
	return t.UTC().Format(time.RFC3339)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
