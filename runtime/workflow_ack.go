package runtime

import (
	"context"

	"github.com/jobgen/jobgen/internal/keyspace"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// A workflow whose steps all run on one queue lives in that queue's slot
// (workflowID), and the success of a step run there is recorded by the
// call that acks its job (step_ack.lua), rather than by a call of its own
// before the ack (workflows.succeeded). A step whose end released
// dependents, or failed its workflow, is recorded and left unacked: its
// worker pushes or cancels what the end calls for, then acks it, as
// after a call of its own.

// stepOnAck returns the end of a step to be recorded by its ack, or nil
// for a job that settles as before: not a step, a step of a workflow
// that lives elsewhere, or one whose ack has more to do (a record of
// finished jobs, progress, a queue with fair groups).
func (w *Worker) stepOnAck(res Reservation, env *Envelope, fin *Finish, progressed bool) *jobrdb.StepEnd {
	if env.Step == nil || progressed || env.Connection != "" || (fin != nil && fin.Record != nil) || w.e.grouped.has(res.Queue) {
		return nil
	}
	if home, ok := keyspace.WorkflowHome(env.Step.Workflow); !ok || home != res.Queue {
		return nil
	}
	end := &jobrdb.StepEnd{ID: res.ID, Token: res.Token, Workflow: env.Step.Workflow,
		End: jobrdb.WfEnd{Step: env.Step.Step, How: "s", Attempt: res.Attempts}}
	if fin != nil {
		end.End.Result = fin.Result
	}
	return end
}

// ackSteps acks items, each a step's success to record (ackItem.step),
// tried again through an outage as any ack is. A step whose end calls
// for more is followed up on a goroutine of its own (followStep).
func (w *Worker) ackSteps(ctx context.Context, items []ackItem) {
	// Released steps are pushed in the call only where no dispatch
	// middleware must see each push (pushSteps); a listener is told of
	// them.
	push, tell := !w.e.hasDispatchMiddleware(), !w.e.events.empty()
	done := make([]bool, len(items))
	for first := range items {
		if done[first] {
			continue
		}
		q := items[first].ref.Queue
		var idx []int
		var ends []jobrdb.StepEnd
		for i := first; i < len(items); i++ {
			if !done[i] && items[i].ref.Queue == q {
				done[i] = true
				idx = append(idx, i)
				ends = append(ends, *items[i].step)
			}
		}
		var got []jobrdb.StepAcked
		tries := 0
		err := w.settleRetried(ctx, "ack", func() error {
			tries++
			var err error
			got, err = w.e.store.StepAck(ctx, q, push, tell, ends)
			return err
		}, "jobs", len(ends))
		if err != nil {
			w.log.Error("ack of workflow steps failed; the jobs will run again when their leases run out", "queue", q, "jobs", len(ends), "err", err)
			w.stepsDone(len(ends))
			continue
		}
		var lost []Ref
		var stale []int
		acked := make([]int, 0, len(idx))
		for k, a := range got {
			it := &items[idx[k]]
			switch {
			case a.Stale:
				lost = append(lost, it.ref)
				stale = append(stale, idx[k])
			case a.Acked:
				w.workflowStep().warnRetriedAlone(it.env, it.step.End.Attempt, a.Outcome)
				if a.Pushed {
					w.e.pushedInAck(a.Outcome.Released)
				}
				acked = append(acked, idx[k])
			default:
				if a.Pushed { // the first part of a release in parts
					w.e.pushedInAck(a.Outcome.Released)
					a.Outcome.Released = nil
				}
				w.followStep(ctx, *it, a.Outcome)
				continue
			}
			w.stepsDone(1)
		}
		if len(lost) > 0 {
			refused := w.ackRefused(ctx, lost, tries > 1)
			for _, i := range stale {
				if !refused[items[i].ref] {
					acked = append(acked, i) // an earlier try acked it
				}
			}
		}
		for _, i := range acked {
			w.emit(items[i].ev, JobProcessed)
			w.ended(ctx, items[i].env)
		}
	}
}

// followStep does what a recorded step's end calls for (push what it
// released, or cancel the released steps of the workflow it failed and
// run the catch), then acks the step's job: on a goroutine of its own,
// which the worker waits for before it stops. If the follow-up fails,
// the job is not acked, and runs again when its lease runs out; its end
// is then recorded again, and hands back the same steps.
func (w *Worker) followStep(ctx context.Context, it ackItem, o jobrdb.WfOutcome) {
	w.follows.Add(1)
	go func() {
		defer w.follows.Done()
		defer w.stepsDone(1)
		// Its lease is kept by the heartbeat while the follow-up runs, as
		// it was while the job ran: a release of many steps takes a while.
		w.track(it.ref, func(error) {}, RunningJob{})
		defer w.untrack(it.ref)
		s := w.workflowStep()
		s.warnRetriedAlone(it.env, it.step.End.Attempt, o)
		if err := s.follow(ctx, it.env, o); err != nil {
			w.log.Error("pushing the steps a workflow step released failed; the step runs again when its lease runs out", "queue", it.ref.Queue, "job", it.env.Name, "id", it.ref.ID,
				"workflow", it.env.Step.Workflow, "step", it.env.Step.Step, "err", err)
			return
		}
		it.step = nil
		w.ackBatch(ctx, []ackItem{it})
	}()
}

// stepsDone counts n steps whose ack, and what their ends called for,
// are done (Worker.stopWhenIdle).
func (w *Worker) stepsDone(n int) {
	w.stepAcked.Add(int64(n))
	w.stepAcks.Add(-int64(n))
}

// workflowStep returns the worker's step for workflows.
func (w *Worker) workflowStep() workflows {
	for _, s := range w.steps {
		if wf, ok := s.(workflows); ok {
			return wf
		}
	}
	return workflows{busEnv{e: w.e, r: w.r, log: w.log, retryAfter: w.cfg.RetryAfter}}
}

// pushedInAck emits JobQueued for the steps a step_ack pushed.
func (e *Engine) pushedInAck(steps []jobrdb.WfRelease) {
	for _, r := range steps {
		if env, _, err := releasedEnvelope(r); err == nil {
			e.events.emit(Event{Kind: JobQueued, Queue: env.Queue, Name: env.Name, ID: env.ID})
		}
	}
}
