package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/outboxsql"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// A workflow through the outbox: DispatchWorkflowTx writes one row of
// kind "workflow" holding the workflow's plan, its steps encoded as
// DispatchWorkflow encodes them; the relay that claims the row makes the
// workflow (wf_create) and pushes its first steps, as DispatchWorkflow
// does after its plan. Both halves are idempotent under the workflow's
// ID: a row relayed again finds the workflow, and pushes only its
// released steps not pushed yet (step_push).

// outboxWorkflowRecord is the payload of a workflow row: the plan,
// as wf_create takes it.
type outboxWorkflowRecord struct {
	Policy     string           `msgpack:"p"`
	Deadline   int64            `msgpack:"d"` // ms from the create, 0 for none
	Retention  int64            `msgpack:"r"` // ms
	Catch      []byte           `msgpack:"c"`
	FirstQueue string           `msgpack:"q"` // of the deadline's job
	Steps      []outboxWorkflow `msgpack:"s"`
}

type outboxWorkflow struct {
	ID      string `msgpack:"i"`
	Job     []byte `msgpack:"j"`
	Needs   string `msgpack:"n"`
	Waits   string `msgpack:"w"`
	MayFail bool   `msgpack:"f"`
	Push    string `msgpack:"p,omitempty"` // jobrdb.WfStep.Push
}

// DispatchTx writes the workflow into tx's outbox, as one row, through
// the dispatcher for ctx (as Dispatch finds it), which must be an
// *Engine, and returns its ID. The workflow exists if and only if tx
// commits: a relay then creates it and pushes its first steps, once.
func (w *Workflow) DispatchTx(ctx context.Context, tx Tx) (string, error) {
	d, err := DispatcherFor(ctx, "")
	if err != nil {
		return "", err
	}
	e, ok := d.(*Engine)
	if !ok {
		return "", fmt.Errorf("%w: a workflow is dispatched through an *Engine, not a %T", ErrInvalid, d)
	}
	return e.DispatchWorkflowTx(ctx, tx, w)
}

// DispatchWorkflowTx writes w into tx's outbox as one row holding its
// plan (every step's job encoded, sealed and checked, as
// DispatchWorkflow encodes them), and returns its ID, fixed now. What
// DispatchWorkflow refuses, it refuses, writing nothing. When tx has
// committed, a relay creates the workflow and pushes the steps that
// wait for nobody; its deadline, if any, counts from then. A row
// relayed again (a relay that died before it deleted the row) creates
// nothing more and pushes no step twice.
func (e *Engine) DispatchWorkflowTx(ctx context.Context, tx Tx, w *Workflow) (string, error) {
	if err := checkTx(tx); err != nil {
		return "", fmt.Errorf("dispatch workflow in a transaction: %w", err)
	}
	plan, err := e.planWorkflow(w)
	if err != nil {
		return "", err
	}
	if err := e.checkStepConnections(ctx, plan.id, w.steps); err != nil {
		return "", err
	}
	rec := outboxWorkflowRecord{Policy: plan.policy, Deadline: plan.deadline, Retention: e.workflowRetention().Milliseconds(),
		Catch: plan.catch, FirstQueue: plan.firstQueue, Steps: make([]outboxWorkflow, len(plan.steps))}
	for i, s := range plan.steps {
		rec.Steps[i] = outboxWorkflow{ID: s.ID, Job: s.Job, Needs: s.Needs, Waits: s.Waits, MayFail: s.MayFail, Push: s.Push}
	}
	payload, err := msgpack.Marshal(&rec)
	if err != nil {
		return "", fmt.Errorf("dispatch workflow %s in a transaction: %w", plan.id, err)
	}
	_, err = outboxsql.Insert(ctx, tx, e.outboxTable(), []outboxsql.Row{{
		ID: plan.id, Kind: outboxsql.KindWorkflow, Queue: plan.firstQueue, Name: "workflow", Payload: payload,
	}})
	if err == nil {
		err = e.wakeRelays(ctx, tx)
	}
	if err != nil {
		return "", fmt.Errorf("dispatch workflow %s in a transaction: %w", plan.id, err)
	}
	return plan.id, nil
}

// relayWorkflow creates a workflow row's workflow, unless it exists, and
// pushes its released steps not pushed yet; then it queues the
// workflow's deadline, if it has one. It returns the number of steps a
// create released.
//
// Past deadline (Redis's clock), the create writes nothing and fails
// LATE, as outbox_push does for a job row: a relay stalled past its
// lease, whose row another relay has relayed since, must not create the
// workflow again once it has ended and expired.
func (e *Engine) relayWorkflow(ctx context.Context, row RelayRow, out *RelayOutcome, deadline time.Time) (int64, error) {
	var rec outboxWorkflowRecord
	if err := msgpack.Unmarshal(row.Payload, &rec); err != nil {
		out.Parked = fmt.Sprintf("decode workflow plan: %v", err)
		return 0, nil
	}
	if err := validateWorkflowID(row.ID); err != nil {
		out.Parked = err.Error()
		return 0, nil
	}
	steps := make([]jobrdb.WfStep, len(rec.Steps))
	for i, s := range rec.Steps {
		steps[i] = jobrdb.WfStep{ID: s.ID, Job: s.Job, Needs: s.Needs, Waits: s.Waits, MayFail: s.MayFail, Push: s.Push}
	}
	created, rel, err := e.store.WfCreate(ctx, row.ID, rec.Policy, rec.Deadline, rec.Retention, rec.Catch, deadline.UnixMilli(), steps)
	if err != nil {
		if jobrdb.HasErrorPrefix(err, "WRONGTYPE") || jobrdb.HasErrorPrefix(err, "wf_create") || jobrdb.HasErrorPrefix(err, "wf_build") {
			out.Parked = "create workflow: " + err.Error()
			return 0, nil
		}
		return 0, fmt.Errorf("outbox relay: create workflow %s: %w", row.ID, err)
	}
	if err := e.pushSteps(ctx, row.ID, rel, nil); err != nil {
		return 0, fmt.Errorf("outbox relay: workflow %s: push its first steps: %w", row.ID, err)
	}
	if rec.Deadline > 0 {
		// Queued on each relay of the row: a deadline's job that finds
		// the deadline not yet passed, or the workflow ended, does nothing.
		if err := e.scheduleDeadline(ctx, row.ID, rec.FirstQueue, time.Duration(rec.Deadline)*time.Millisecond); err != nil {
			return 0, fmt.Errorf("outbox relay: %w", err)
		}
	}
	out.Done = true
	if !created {
		return 0, nil
	}
	return int64(len(rel)), nil
}
