package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// What operators do to a workflow: read it, cancel it, retry it; and its
// deadline, kept by a delayed job of its own.

// WorkflowState is the state of a workflow.
type WorkflowState string

// The states of a workflow.
const (
	WorkflowRunning   WorkflowState = "run"
	WorkflowSucceeded WorkflowState = "ok"
	WorkflowFailed    WorkflowState = "failed"
	WorkflowCancelled WorkflowState = "cancelled"
)

// Word is the state as an operator reads it: running, succeeded, failed
// or cancelled. (The state itself is what Redis keeps, and what the
// dashboard's styles are named after.)
func (s WorkflowState) Word() string {
	switch s {
	case WorkflowRunning:
		return "running"
	case WorkflowSucceeded:
		return "succeeded"
	}
	return string(s)
}

// StepState is the state of a step of a workflow.
type StepState string

// The states of a step.
const (
	StepWaiting   StepState = "waiting"   // for its parents
	StepReleased  StepState = "released"  // pushed to its queue: queued or running
	StepSucceeded StepState = "succeeded" // its result, if any, is kept
	StepFailed    StepState = "failed"    // for good
	StepDropped   StepState = "dropped"   // its workflow ended before it ran
)

var stepStates = map[string]StepState{"w": StepWaiting, "q": StepReleased, "s": StepSucceeded, "f": StepFailed, "x": StepDropped}

// WorkflowInfo is a workflow as Inspector.Workflow reads it.
type WorkflowInfo struct {
	ID    string
	State WorkflowState
	// Why says why it failed or was cancelled.
	Why string
	// Policy is what a step's failure does to it.
	Policy FailurePolicy
	// CreatedAt and EndedAt are by the Redis clock; EndedAt is zero while
	// it runs. Deadline is zero for none.
	CreatedAt, EndedAt, Deadline time.Time
	// Steps are its steps, in the order of their IDs (dispatched ones
	// first, each spawned one after its spawner's).
	Steps []WorkflowStepInfo
}

// WorkflowStepInfo is one step of a workflow.
type WorkflowStepInfo struct {
	// ID is the step's ID in its workflow: its index for a step it was
	// dispatched with, "<spawner>.<n>" for a spawned one.
	ID string
	// Name, Queue and JobID are its job's wire name, queue and ID: the
	// job page of the dashboard, `queue:job`, Inspector.Job.
	Name, Queue, JobID string
	State              StepState
	// Needs are the steps whose results it is handed, in order; Waits,
	// the steps it only waits for.
	Needs, Waits []string
	// MayFail: its failure does not fail the workflow.
	MayFail bool
	// HasResult: its result is kept. ResultSize is its size in bytes
	// (Workflow; WorkflowGraph leaves it 0).
	HasResult  bool
	ResultSize int64
}

// Workflow reads workflow id: its state and every step's, with the
// size of each step's result (one Redis command a result). It returns
// ErrNoWorkflow for an ID Redis does not hold.
func (i *Inspector) Workflow(ctx context.Context, id string) (*WorkflowInfo, error) {
	return i.readWorkflow(ctx, id, true)
}

// WorkflowGraph reads workflow id as Workflow does, but not the sizes of
// its steps' results (ResultSize is 0; HasResult says which have one):
// six Redis commands whatever the number of steps, for a page that
// draws a big workflow.
func (i *Inspector) WorkflowGraph(ctx context.Context, id string) (*WorkflowInfo, error) {
	return i.readWorkflow(ctx, id, false)
}

func (i *Inspector) readWorkflow(ctx context.Context, id string, sizes bool) (*WorkflowInfo, error) {
	if err := validateWorkflowID(id); err != nil {
		return nil, err
	}
	r, err := i.e.store.WfGet(ctx, id, sizes)
	if err != nil {
		return nil, fmt.Errorf("read workflow %s: %w", id, err)
	}
	if len(r.Meta) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoWorkflow, id)
	}
	w := &WorkflowInfo{ID: id, State: WorkflowState(r.Meta["st"]), Why: r.Meta["why"]}
	if r.Meta["pol"] == "c" {
		w.Policy = ContinueWorkflow
	}
	w.CreatedAt = metaTime(r.Meta["at"])
	w.EndedAt = metaTime(r.Meta["end"])
	w.Deadline = metaTime(r.Meta["dl"])
	mayFail := map[string]bool{}
	for _, s := range r.MayFail {
		mayFail[s] = true
	}
	hasResult := make(map[string]bool, len(r.Results))
	for _, s := range r.Results {
		hasResult[s] = true
	}
	ids := make([]string, 0, len(r.State))
	for s := range r.State {
		ids = append(ids, s)
	}
	sortStepIDs(ids)
	for _, s := range ids {
		st := WorkflowStepInfo{ID: s, State: stepStates[r.State[s]], MayFail: mayFail[s], HasResult: hasResult[s], ResultSize: r.Sizes[s]}
		if p, ok := r.Parents[s]; ok {
			needs, waits, _ := strings.Cut(p, ";")
			st.Needs, st.Waits = splitIDs(needs), splitIDs(waits)
		}
		if env, _, err := releasedEnvelope(jobrdb.WfRelease{ID: s, Job: []byte(r.Jobs[s])}); err == nil {
			st.Name, st.Queue, st.JobID = env.Name, env.Queue, env.ID
		}
		w.Steps = append(w.Steps, st)
	}
	return w, nil
}

// WorkflowResult decodes the result of step of workflow id as an R.
func WorkflowResult[R any](ctx context.Context, i *Inspector, id, step string) (R, error) {
	var v R
	r, err := i.e.store.WfResults(ctx, id, []string{step})
	if err != nil {
		return v, fmt.Errorf("read result of step %s of workflow %s: %w", step, id, err)
	}
	if len(r) == 0 || r[0] == nil {
		return v, fmt.Errorf("%w: step %s of workflow %s has no result (it has not succeeded, recorded none, or the workflow is past its retention)", ErrNoWorkflow, step, id)
	}
	return Decode[R](r[0])
}

func splitIDs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func metaTime(s string) time.Time {
	var ms int64
	if _, err := fmt.Sscan(s, &ms); err != nil || ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// CancelWorkflow cancels workflow id: its waiting steps are dropped, its
// queued ones taken out of their queues and its running ones cancelled
// (Inspector.Cancel), and its catch runs. It returns ErrWorkflowEnded if
// it had ended: a cancel that races the workflow's last step leaves it
// in one state, whichever came first.
func (i *Inspector) CancelWorkflow(ctx context.Context, id string) error {
	return i.e.endWorkflow(ctx, id, "cancel")
}

func (e *Engine) endWorkflow(ctx context.Context, id, kind string) error {
	if err := validateWorkflowID(id); err != nil {
		return err
	}
	o, err := e.store.WfCancel(ctx, id, kind)
	if err != nil {
		return fmt.Errorf("%s workflow %s: %w", kind, id, err)
	}
	b := busEnv{e: e, r: NewRouter(), log: e.cfg.Logger, retryAfter: time.Minute}
	if r, ok := ctx.Value(routerKey{}).(*Router); ok {
		b.r = r // the deadline job: the worker's callbacks
	}
	switch {
	case o.State == "gone":
		if kind == "deadline" {
			return nil // past its retention
		}
		return fmt.Errorf("%w: %s", ErrNoWorkflow, id)
	case o.What != "failed":
		if kind == "deadline" {
			if o.State == string(WorkflowFailed) {
				// the deadline job ran before, and its worker died
				// before the catch ran (the catch is marked: at most once)
				b.runWorkflowCatch(ctx, id, DefaultQueue)
			}
			return nil
		}
		return fmt.Errorf("%w: workflow %s is %s", ErrWorkflowEnded, id, WorkflowState(o.State).Word())
	}
	e.cancelSteps(ctx, id, o.Cancel, "", b.log)
	queue := DefaultQueue
	if len(o.Cancel) > 0 {
		if env, _, err := releasedEnvelope(o.Cancel[0]); err == nil {
			queue = env.Queue
		}
	}
	b.runWorkflowCatch(ctx, id, queue)
	return nil
}

// RetryWorkflow runs a failed or cancelled workflow again from the steps
// that did not succeed: each gets a new job, and those whose parents all
// succeeded are pushed at once. The steps that succeeded keep their
// results and do not run again.
func (i *Inspector) RetryWorkflow(ctx context.Context, id string) error {
	e := i.e
	w, err := i.Workflow(ctx, id)
	if err != nil {
		return err
	}
	if w.State != WorkflowFailed && w.State != WorkflowCancelled {
		return fmt.Errorf("%w: retry workflow %s: it is %s, not failed or cancelled", ErrInvalid, id, w.State.Word())
	}
	r, err := e.store.WfGet(ctx, id, false)
	if err != nil {
		return err
	}
	var pairs []any
	for _, s := range w.Steps {
		if s.State != StepFailed && s.State != StepDropped {
			continue
		}
		payload, delay, err := decodeLink([]byte(r.Jobs[s.ID]))
		if err != nil {
			return fmt.Errorf("retry workflow %s: step %s: %w", id, s.ID, err)
		}
		env, err := decodeLinkEnvelope(payload)
		if err != nil {
			return fmt.Errorf("retry workflow %s: step %s: %w", id, s.ID, err)
		}
		if err := e.resealAs(env, NewID()); err != nil {
			return fmt.Errorf("retry workflow %s: step %s: %w", id, s.ID, err)
		}
		env.Step.Inputs, env.Step.Read = nil, false
		b, err := env.Encode()
		if err != nil {
			return err
		}
		pairs = append(pairs, s.ID, encodeLink(b, delay))
	}
	if len(pairs) == 0 {
		return fmt.Errorf("%w: retry workflow %s: no step failed or was dropped", ErrInvalid, id)
	}
	ok, why, rel, err := e.store.WfRetry(ctx, id, pairs)
	if err != nil {
		return fmt.Errorf("retry workflow %s: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("%w: retry workflow %s: %s (it changed while read)", ErrInvalid, id, why)
	}
	return e.pushSteps(ctx, id, rel, nil)
}

// WorkflowDeadlineJobName is the wire name of the delayed job that keeps
// a workflow's deadline: when it runs, it fails the workflow if it is
// still running. Every router runs it.
const WorkflowDeadlineJobName = "jobgen.WorkflowDeadline"

type workflowDeadline struct {
	ID    string `msgpack:"w"`
	queue string
}

func (workflowDeadline) JobName() string { return WorkflowDeadlineJobName }
func (d workflowDeadline) JobOptions() JobOptions {
	return JobOptions{Queue: d.queue, Tries: 3}
}
func (d workflowDeadline) EncodeJob() ([]byte, error) { return Encode(d) }

func (e *Engine) scheduleDeadline(ctx context.Context, id, queue string, d time.Duration) error {
	if _, err := e.Dispatch(ctx, NewPendingDispatch(workflowDeadline{ID: id, queue: queue}).Delay(d)); err != nil {
		return fmt.Errorf("workflow %s: its graph is stored and its first steps pushed, and queueing its deadline failed: %w", id, err)
	}
	return nil
}

// workflowDeadlineRoute runs deadline jobs.
func (r *Router) workflowDeadlineRoute() *route {
	return &route{name: WorkflowDeadlineJobName, run: func(ctx context.Context, body []byte) error {
		d, err := Decode[workflowDeadline](body)
		if err != nil {
			return FailRequest(fmt.Errorf("%w: workflow deadline job does not decode: %v", ErrDecode, err))
		}
		e, err := engineFrom(ctx)
		if err != nil {
			return err
		}
		return e.endWorkflow(ctx, d.ID, "deadline")
	}}
}
