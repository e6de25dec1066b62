package runtime

import (
	"fmt"
	"strconv"
	"time"
)

// Workflows: jobs in a graph. A workflow's steps are jobs; a step runs
// once every step it depends on has succeeded, and is handed the results
// of the steps it needs, typed. Build one with NewWorkflow and AddStep
// (or the AddTo methods jobgen generates for jobs annotated `needs=`),
// and dispatch it whole; a running step adds steps to its own workflow
// with Spawn.
//
//	wf := runtime.NewWorkflow().Catch(orderFailed.With(id))
//	charge := runtime.AddStep(wf, Charge{OrderID: id})
//	stock := runtime.AddStep(wf, ReserveStock{OrderID: id})
//	Ship{OrderID: id}.AddTo(wf, charge, stock)
//	wfID, err := wf.Dispatch(ctx)
//
// The graph lives in Redis under the workflow's own hash tag
// ({wf:<id>}), apart from the queues of its steps (workflow_store.go);
// docs/workflows.md gives the guarantees, crash point by crash point.

// FailurePolicy says what a step's failure for good does to its
// workflow.
type FailurePolicy uint8

const (
	// FailWorkflow fails the workflow: its waiting steps are dropped,
	// its running ones cancelled, and its catch callback runs, once.
	// It is the default.
	FailWorkflow FailurePolicy = iota
	// ContinueWorkflow lets the workflow go on without the step: its
	// dependents run when their other parents have succeeded, and a
	// result they need from it is the zero value (StepInputs.Failed
	// tells them apart).
	ContinueWorkflow
)

func (p FailurePolicy) String() string {
	switch p {
	case FailWorkflow:
		return "fail"
	case ContinueWorkflow:
		return "continue"
	}
	return "FailurePolicy(" + strconv.Itoa(int(p)) + ")"
}

// MaxWorkflowSteps bounds the steps of one workflow, those it is
// dispatched with and those its steps spawn.
const MaxWorkflowSteps = 100_000

// Workflow is a graph of jobs to dispatch together. Its setters return
// it, so they chain. A Workflow is built by one goroutine.
type Workflow struct {
	id       string
	steps    []*stepSpec
	catch    *CallbackRef
	policy   FailurePolicy
	deadline time.Duration
	err      error // the first mistake made building it, returned by Dispatch
}

// NewWorkflow starts an empty workflow with a new ID.
func NewWorkflow() *Workflow { return &Workflow{} }

// WithID gives the workflow the ID id in place of a new one. Dispatching
// a workflow again under an ID that exists creates nothing: it pushes the
// steps of the existing one that are ready and not pushed yet, so a
// dispatcher that failed part way can dispatch again. id is 1 to 100
// bytes with no { or }.
func (w *Workflow) WithID(id string) *Workflow {
	w.id = id
	return w
}

// ID returns the ID given with WithID, or "" until Dispatch picks one.
func (w *Workflow) ID() string { return w.id }

// Catch sets the callback that runs, once, when the workflow fails: a
// step failed for good under FailWorkflow, its deadline passed, or it
// was cancelled. The callback must be registered with RegisterCallback
// on the workers' routers.
func (w *Workflow) Catch(cb CallbackRef) *Workflow {
	w.catch = &cb
	return w
}

// OnStepFailure sets what a step's failure for good does to the
// workflow, for every step that does not set its own (StepMayFail).
func (w *Workflow) OnStepFailure(p FailurePolicy) *Workflow {
	w.policy = p
	return w
}

// Deadline fails the workflow if it has not ended d after its dispatch:
// its waiting steps are dropped, its running ones cancelled, and its
// catch runs.
func (w *Workflow) Deadline(d time.Duration) *Workflow {
	w.deadline = d
	return w
}

// Len returns the number of steps added so far.
func (w *Workflow) Len() int { return len(w.steps) }

// stepSpec is one step as built, before dispatch.
type stepSpec struct {
	id      string
	job     Job
	needs   []Need   // the parents whose results it is handed, in order
	after   []string // parents it waits for without their results
	queue   string
	conn    string
	delay   time.Duration
	mayFail bool
}

// Step is a typed handle on a step of a workflow, whose job is a J. Pass
// it to the steps that need its result (the generated AddTo and
// SpawnAfter methods take the handles of the steps they need, typed, so
// a missing or mistyped parent does not compile), or to After.
type Step[J Job] struct {
	wf *Workflow // nil for a spawned step
	id string
}

// ID returns the step's ID in its workflow.
func (s Step[J]) ID() string { return s.id }

// Need is the handle to pass to Needs: the step's result, one value.
func (s Step[J]) Need() Need {
	return Need{wf: s.wf, ids: []string{s.id}, name: stepJobName[J]()}
}

func (s Step[J]) parent() (*Workflow, string) { return s.wf, s.id }

// Steps is a list of steps whose jobs are all J: a fan-out, whose
// results a fan-in step is handed in order.
type Steps[J Job] []Step[J]

// Need is the handle to pass to Needs: the steps' results, in order.
func (s Steps[J]) Need() Need {
	n := Need{list: true, name: stepJobName[J](), ids: make([]string, len(s))}
	for i, st := range s {
		n.ids[i] = st.id
		if st.wf != nil {
			n.wf = st.wf
		}
	}
	return n
}

// Need is a step's need of other steps' results: one step's, or a list
// of steps' in order. Build one with Step.Need or Steps.Need.
type Need struct {
	wf   *Workflow
	ids  []string
	name string // the wire name of the needed steps' job
	list bool
}

// Parent is a step handle: a Step of any job type.
type Parent interface {
	parent() (*Workflow, string)
}

// StepOption sets an option of one step.
type StepOption func(*stepSpec)

// Needs makes the step wait for the steps of needs and hands it their
// results, in the order given, as StepInputs. Generated AddTo and
// SpawnAfter methods pass it, checked against the job's `needs=`
// annotation; a job with such an annotation added without them is
// refused at dispatch.
func Needs(needs ...Need) StepOption {
	return func(s *stepSpec) { s.needs = append(s.needs, needs...) }
}

// After makes the step wait for parents to succeed, without their
// results.
func After(parents ...Parent) StepOption {
	return func(s *stepSpec) {
		for _, p := range parents {
			_, id := p.parent()
			s.after = append(s.after, id)
		}
	}
}

// StepOnQueue pushes the step to queue q in place of its annotation's.
func StepOnQueue(q string) StepOption { return func(s *stepSpec) { s.queue = q } }

// StepOnConnection pushes the step through the dispatcher named name.
// It must be an *Engine on the same Redis, and with the same key prefix,
// as the workflow's: the worker that runs the step records its end in
// the workflow through its own engine's keys. Dispatch refuses another
// prefix (ErrInvalid).
func StepOnConnection(name string) StepOption { return func(s *stepSpec) { s.conn = name } }

// StepDelay delays the step by d once it is ready.
func StepDelay(d time.Duration) StepOption { return func(s *stepSpec) { s.delay = d } }

// StepMayFail lets the workflow continue when this step fails for good,
// whatever the workflow's policy (ContinueWorkflow, for this step).
func StepMayFail() StepOption { return func(s *stepSpec) { s.mayFail = true } }

// AddStep adds job to w as a step and returns its handle. Its parents
// are given by opts (Needs, After); parents must be steps of w added
// before, so a graph built this way has no cycle. Mistakes (a parent of
// another workflow, a bad queue) are returned by Dispatch.
func AddStep[J Job](w *Workflow, job J, opts ...StepOption) Step[J] {
	s := &stepSpec{id: strconv.Itoa(len(w.steps)), job: job}
	for _, o := range opts {
		o(s)
	}
	for _, n := range s.needs {
		if n.wf != nil && n.wf != w {
			w.fail(fmt.Errorf("%w: workflow: step %s (%s) needs a step of another workflow", ErrInvalid, s.id, job.JobName()))
		}
	}
	w.steps = append(w.steps, s)
	return Step[J]{wf: w, id: s.id}
}

// AddSteps adds each of jobs to w as a step with the same options, and
// returns their handles in order: a fan-out whose results a fan-in step
// needs with Steps.Need.
func AddSteps[J Job](w *Workflow, jobs []J, opts ...StepOption) Steps[J] {
	out := make(Steps[J], len(jobs))
	for i, j := range jobs {
		out[i] = AddStep(w, j, opts...)
	}
	return out
}

func (w *Workflow) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// stepJobName returns the wire name of J's zero value, "" if it has
// none (a *PendingDispatch).
func stepJobName[J Job]() (name string) {
	defer func() {
		if recover() != nil {
			name = ""
		}
	}()
	var j J
	return j.JobName()
}
