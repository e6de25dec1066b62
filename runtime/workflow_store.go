package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/keyspace"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// How a workflow reaches Redis: wf_create.lua stores its graph and
// releases its roots, each released step is pushed to its queue once
// (step_push.lua, marked as a chain's link is), and the worker that runs
// a step records its end (wf_settle.lua) before it acks the step's job,
// then pushes the dependents that end released.

// ErrWorkflowEnded is returned by Spawn when the step's workflow has
// ended (it failed, or was cancelled) or the step's attempt is no longer
// the running one, and by Engine.CancelWorkflow for a workflow that ended.
var ErrWorkflowEnded = errors.New("jobgen: the workflow has ended")

// ErrNoWorkflow is returned for a workflow ID that Redis does not hold:
// never dispatched, or past its retention.
var ErrNoWorkflow = errors.New("jobgen: no such workflow")

// DefaultWorkflowRetention is how long an ended workflow's graph and
// results are kept when EngineConfig.WorkflowRetention is 0.
const DefaultWorkflowRetention = 24 * time.Hour

// Dispatch dispatches the workflow through the dispatcher for ctx (as
// runtime.Dispatch finds it), which must be an *Engine, and returns its
// ID.
func (w *Workflow) Dispatch(ctx context.Context) (string, error) {
	d, err := DispatcherFor(ctx, "")
	if err != nil {
		return "", err
	}
	e, ok := d.(*Engine)
	if !ok {
		return "", fmt.Errorf("%w: a workflow is dispatched through an *Engine, not a %T", ErrInvalid, d)
	}
	return e.DispatchWorkflow(ctx, w)
}

// DispatchWorkflow stores w's graph and pushes the steps that wait for
// nobody. Each step's job is encoded, and checked, before anything is
// written: a step that cannot be a step (a unique job, a debounced job,
// a chain) is refused naming it, with ErrInvalid.
func (e *Engine) DispatchWorkflow(ctx context.Context, w *Workflow) (string, error) {
	plan, err := e.planWorkflow(w)
	if err != nil {
		return "", err
	}
	if err := e.checkStepConnections(ctx, plan.id, w.steps); err != nil {
		return "", err
	}
	_, rel, err := e.store.WfCreate(ctx, plan.id, plan.policy, plan.deadline, e.workflowRetention().Milliseconds(), plan.catch, 0, plan.steps)
	if err != nil {
		return "", fmt.Errorf("dispatch workflow %s: %w", plan.id, err)
	}
	if err := e.pushSteps(ctx, plan.id, rel, nil); err != nil {
		return plan.id, fmt.Errorf("dispatch workflow %s: its graph is stored, and pushing its first steps failed (dispatch it again under WithID(%q) to push them): %w", plan.id, plan.id, err)
	}
	if w.deadline > 0 {
		if err := e.scheduleDeadline(ctx, plan.id, plan.firstQueue, w.deadline); err != nil {
			return plan.id, err
		}
	}
	return plan.id, nil
}

// workflowPlan is a workflow encoded for wf_create.lua.
type workflowPlan struct {
	id         string
	policy     string
	deadline   int64
	catch      []byte
	steps      []jobrdb.WfStep
	firstQueue string
}

func (e *Engine) planWorkflow(w *Workflow) (*workflowPlan, error) {
	if w.err != nil {
		return nil, w.err
	}
	if len(w.steps) == 0 {
		return nil, fmt.Errorf("%w: workflow has no steps", ErrInvalid)
	}
	if len(w.steps) > MaxWorkflowSteps {
		return nil, fmt.Errorf("%w: workflow has %d steps, over MaxWorkflowSteps (%d)", ErrInvalid, len(w.steps), MaxWorkflowSteps)
	}
	id := w.id
	if id == "" {
		id = e.workflowID(w)
	}
	if err := validateWorkflowID(id); err != nil {
		return nil, err
	}
	p := &workflowPlan{id: id, policy: "f", deadline: w.deadline.Milliseconds()}
	if w.policy == ContinueWorkflow {
		p.policy = "c"
	}
	if w.catch != nil {
		b, err := w.catch.encode()
		if err != nil {
			return nil, fmt.Errorf("workflow %s: catch: %w", id, err)
		}
		p.catch = b
	}
	now := time.Now()
	p.steps = make([]jobrdb.WfStep, len(w.steps))
	for i, s := range w.steps {
		st, env, err := e.encodeStep(id, s, now)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			p.firstQueue = env.Queue
		}
		p.steps[i] = st
	}
	w.id = id
	return p, nil
}

// validateWorkflowID checks a workflow ID: 1 to 100 bytes, no braces
// (its keys' hash tag) but around a home queue's name at its start
// (keyspace.WorkflowHome), and no comma or semicolon.
func validateWorkflowID(id string) error {
	rest := id
	if home, ok := keyspace.WorkflowHome(id); ok && ValidateQueueName(home) == nil {
		rest = id[len(home)+2:]
	}
	if rest == "" || len(id) > 100 || strings.ContainsAny(rest, "{},;") {
		return fmt.Errorf("%w: workflow ID %q must be 1 to 100 bytes with no {, }, comma or semicolon (but for a home queue in braces at its start)", ErrInvalid, id)
	}
	return nil
}

// workflowID returns a new ID for w. A workflow whose steps all run on
// one queue of this engine, not partitioned, gets that queue as its home
// ("{<queue>}<ID>"): its keys share the queue's slot, and each step's
// end is recorded in the call that acks its job (step_ack.lua), not in a
// call of its own.
func (e *Engine) workflowID(w *Workflow) string {
	id := NewID()
	home := ""
	for _, s := range w.steps {
		q, conn := stepTarget(s)
		if conn != "" || (home != "" && q != home) {
			return id
		}
		home = q
	}
	if home == "" || e.partitionsOf(home) != nil || len(home)+2+len(id) > 100 || ValidateQueueName(home) != nil {
		return id
	}
	return "{" + home + "}" + id
}

// stepTarget returns the queue and connection step s runs on.
func stepTarget(s *stepSpec) (queue, conn string) {
	o := asPending(s.job).JobOptions()
	queue, conn = o.Queue, o.Connection
	if s.queue != "" {
		queue = s.queue
	}
	if s.conn != "" {
		conn = s.conn
	}
	if queue == "" {
		queue = DefaultQueue
	}
	return queue, conn
}

// encodeStep encodes one step: its job's envelope, carrying the
// workflow and step, sealed if encrypted, with its delay.
func (e *Engine) encodeStep(wf string, s *stepSpec, now time.Time) (jobrdb.WfStep, *Envelope, error) {
	name := s.job.JobName()
	where := func(err error) error { return fmt.Errorf("workflow %s: step %s (%s): %w", wf, s.id, name, err) }
	p := asPending(s.job)
	if _, ok := underlying(s.job).(*PendingChain); ok || len(p.chain) > 0 {
		return jobrdb.WfStep{}, nil, where(fmt.Errorf("%w: a chain cannot be a step; add its jobs as steps, each After the one before", ErrInvalid))
	}
	o := p.JobOptions()
	switch {
	case o.UniqueFor > 0:
		return jobrdb.WfStep{}, nil, where(fmt.Errorf("%w: the job is unique (unique_for): a step is released by its parents and takes no unique lock; dispatch it on its own", ErrInvalid))
	case p.debounced():
		return jobrdb.WfStep{}, nil, where(fmt.Errorf("%w: the job is debounced: a step is released once, by its parents; dispatch it on its own", ErrInvalid))
	case !p.at.IsZero():
		return jobrdb.WfStep{}, nil, where(fmt.Errorf("%w: At(t): a step runs when its parents have succeeded; give it StepDelay", ErrInvalid))
	case p.catch != nil:
		return jobrdb.WfStep{}, nil, where(fmt.Errorf("%w: a step has no catch of its own; set the workflow's with Workflow.Catch", ErrInvalid))
	}
	if err := checkNeeds(o.Needs, s.needs); err != nil {
		return jobrdb.WfStep{}, nil, where(err)
	}
	queue, conn := stepTarget(s)
	if err := ValidateQueueName(queue); err != nil {
		return jobrdb.WfStep{}, nil, where(err)
	}
	env, err := newStepEnvelope(p.job, queue, conn, now)
	if err != nil {
		return jobrdb.WfStep{}, nil, where(err)
	}
	env.Step = &EnvelopeStep{Workflow: wf, Step: s.id}
	var needs []string
	for _, n := range s.needs {
		if n.list {
			env.Step.Needs = append(env.Step.Needs, len(n.ids))
		} else {
			env.Step.Needs = append(env.Step.Needs, -1)
		}
		needs = append(needs, n.ids...)
	}
	if err := e.sealPending(env); err != nil {
		return jobrdb.WfStep{}, nil, where(err)
	}
	b, err := env.Encode()
	if err != nil {
		return jobrdb.WfStep{}, nil, where(err)
	}
	delay := o.Delay
	if s.delay > 0 {
		delay = s.delay
	}
	st := jobrdb.WfStep{ID: s.id, Job: encodeLink(b, delay), Needs: strings.Join(needs, ","), Waits: strings.Join(s.after, ","), MayFail: s.mayFail}
	if home, ok := keyspace.WorkflowHome(wf); ok && home == queue && conn == "" && e.partitionsOf(queue) == nil && len(needs) == 0 &&
		delay <= 0 && env.Group() == "" && len(env.Tags) == 0 && len(b) <= e.cfg.MaxPayload && oneParent(s.after) {
		// Its parent's ack may push it as it stands (step_ack.lua): its
		// job, whole, is a payload workers decode.
		st.Push = env.ID
	}
	return st, env, nil
}

// oneParent reports whether after names one step, once or more.
func oneParent(after []string) bool {
	for _, p := range after {
		if p != after[0] {
			return false
		}
	}
	return len(after) > 0
}

// checkNeeds checks a step's needs against its job's `needs=`: the same
// number, each a single step or a list as declared, of the declared job.
func checkNeeds(declared []string, got []Need) error {
	if len(declared) == 0 && len(got) == 0 {
		return nil
	}
	if len(declared) != len(got) {
		return fmt.Errorf("%w: the job needs the results of %d steps (%s), and was added with %d needs; add it with its generated AddTo or SpawnAfter", ErrInvalid, len(declared), strings.Join(declared, ", "), len(got))
	}
	for i, d := range declared {
		list := strings.HasPrefix(d, "[]")
		name := strings.TrimPrefix(d, "[]")
		g := got[i]
		if list != g.list || (g.name != "" && g.name != name) {
			what := g.name
			if g.list {
				what = "[]" + what
			}
			return fmt.Errorf("%w: need %d is %s, and the step was given %s", ErrInvalid, i+1, d, what)
		}
	}
	return nil
}

// newStepRun returns what the context of env's run knows of its step. A
// step released with its inputs has them at once; one released without
// them (EnvelopeStep.Read) reads them when its handler asks (readInputs).
func newStepRun(e *Engine, env *Envelope, attempt int) *stepRun {
	s := &stepRun{e: e, workflow: env.Step.Workflow, step: env.Step.Step, attempt: attempt, env: env}
	if !env.Step.Read {
		s.inputs = groupInputs(s.workflow, s.step, env.Step.Needs, env.Step.Inputs)
	}
	return s
}

// groupInputs groups a step's inputs, the needs' one after another, by
// its needs.
func groupInputs(workflow, step string, needs []int, flat [][]byte) *StepInputs {
	in := &StepInputs{Workflow: workflow, Step: step}
	k := 0
	for _, n := range needs {
		c, list := n, n >= 0
		if !list {
			c = 1
		}
		group := make([][]byte, c)
		for i := range group {
			if k < len(flat) && len(flat[k]) > 0 {
				group[i] = flat[k]
			}
			k++
		}
		in.raw = append(in.raw, group)
		in.lists = append(in.lists, list)
	}
	return in
}

// readInputs reads the inputs of a step released without them, from its
// workflow's results. An error reading them is the attempt's, retried as
// any other; a workflow that no longer has the step, or lists another
// number of results than the step needs, fails it for good.
func (s *stepRun) readInputs(ctx context.Context) error {
	flat, found, err := s.e.store.WfNeeded(ctx, s.workflow, s.step)
	if err != nil {
		return fmt.Errorf("step %s of workflow %s: read its inputs: %w", s.step, s.workflow, err)
	}
	if !found {
		return FailRequest(fmt.Errorf("%w: step %s of workflow %s reads its inputs when it runs, and its workflow no longer has it: the workflow ended, and its keys expired after its retention (WorkflowRetention)", ErrNotAStep, s.step, s.workflow))
	}
	want := 0
	for _, n := range s.env.Step.Needs {
		if n < 0 { // the result of one step
			n = 1
		}
		want += n
	}
	if len(flat) != want {
		return FailRequest(fmt.Errorf("%w: step %s of workflow %s needs %d results, and its workflow lists %d parents for it", ErrDecode, s.step, s.workflow, want, len(flat)))
	}
	s.inputs = groupInputs(s.workflow, s.step, s.env.Step.Needs, flat)
	return nil
}

// spawn adds specs to s's workflow, 1,000 steps a call.
func (e *Engine) spawn(ctx context.Context, s *stepRun, specs []*stepSpec) error {
	if err := e.checkStepConnections(ctx, s.workflow, specs); err != nil {
		return err
	}
	now := time.Now()
	steps := make([]jobrdb.WfStep, len(specs))
	for i, sp := range specs {
		for _, n := range sp.needs {
			if n.wf != nil {
				return fmt.Errorf("%w: spawn: step %s (%s) needs a step of a workflow being built, not of its own", ErrInvalid, sp.id, sp.job.JobName())
			}
		}
		st, _, err := e.encodeStep(s.workflow, sp, now)
		if err != nil {
			return err
		}
		steps[i] = st
	}
	for i := 0; i < len(steps); i += 1000 {
		dropped, err := e.store.WfSpawn(ctx, s.workflow, s.step, s.attempt, MaxWorkflowSteps, steps[i:min(i+1000, len(steps))])
		if err != nil {
			return fmt.Errorf("spawn %d steps in workflow %s: %w", len(steps), s.workflow, err)
		}
		if dropped {
			return fmt.Errorf("%w: spawn in workflow %s: step %s no longer runs in it", ErrWorkflowEnded, s.workflow, s.step)
		}
	}
	return nil
}

// pushSteps pushes released steps to their queues, each once
// (step_push.lua), grouped by engine and queue, 500 a call. from is the
// step whose end released them, for the dispatch middleware.
func (e *Engine) pushSteps(ctx context.Context, wf string, rel []jobrdb.WfRelease, from *JobInfo) error {
	if len(rel) == 0 {
		return nil
	}
	type target struct {
		e     *Engine
		queue string
	}
	byQueue := map[target][]stepItem{}
	var order []target
	var out []Outgoing
	for _, r := range rel {
		env, delay, err := releasedEnvelope(r)
		if err != nil {
			return fmt.Errorf("workflow %s: %w", wf, err)
		}
		te := e
		if env.Connection != "" {
			if te, err = e.stepEngine(ctx, env.Connection); err != nil {
				return fmt.Errorf("workflow %s: step %s: %w", wf, r.ID, err)
			}
		}
		t := target{te, te.partitionFor(env.Queue, env.ID)}
		if _, ok := byQueue[t]; !ok {
			order = append(order, t)
		}
		byQueue[t] = append(byQueue[t], stepItem{env, delay})
		out = append(out, Outgoing{Envelope: env, Delay: delay})
	}
	call := &DispatchCall{Kind: DispatchKindLink, Jobs: out, From: from}
	return e.pushThrough(ctx, call, func(ctx context.Context) error {
		for _, t := range order {
			items := byQueue[t]
			// A workflow in the queue's slot has its states read by the
			// push, which pushes only the steps still released.
			states := ""
			if home, ok := keyspace.WorkflowHome(wf); ok && home == t.queue && t.e == e {
				states = e.keys.WorkflowStates(wf)
			}
			for i := 0; i < len(items); i += 500 {
				if err := t.e.pushStepChunk(ctx, t.queue, states, items[i:min(i+500, len(items))]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// pushStepChunk pushes up to 500 steps to the physical queue q. With
// states, the state hash of their workflow in q's slot, it pushes only
// those still released there (step_push.lua).
func (e *Engine) pushStepChunk(ctx context.Context, q, states string, items []stepItem) error {
	if err := e.remember(ctx, q); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	step := jobrdb.Enqueue{Width: jobrdb.WidthEach, TagBound: MaxTagJobs}
	markers := make([]string, 0, len(items))
	for _, it := range items {
		_, payload, cg, err := e.stored(it.env, it.delay, now, it.env.ID)
		if err != nil {
			return err
		}
		step.Add(it.env.ID, payload, delayMillis(it.delay), cg)
		if len(it.env.Tags) > 0 {
			for len(step.Tags) < len(markers) {
				step.Tags = append(step.Tags, nil)
			}
			step.Tags = append(step.Tags, it.env.Tags)
		}
		markers = append(markers, e.keys.Chained(q, it.env.ID))
	}
	args := []any{len(items), e.cfg.StateRetention.Milliseconds(), "0"}
	if states != "" {
		markers = append(markers, states)
		args[2] = "1"
		for _, it := range items {
			args = append(args, it.env.Step.Step)
		}
	}
	c := e.enqueueCall(scriptStepPush, q, &step, markers, args...)
	// enqueueCall puts the markers (and the states) before the queue's
	// keys, and n, the marker lifetime, the flag (and the steps' IDs)
	// before the jobs, as step_push.lua takes them.
	if _, err := e.store.RunOne(ctx, c).Int64(); err != nil {
		return fmt.Errorf("push %d steps to queue %s: %w", len(items), q, err)
	}
	if !e.events.empty() {
		for _, it := range items {
			e.events.emit(Event{Kind: JobQueued, Queue: it.env.Queue, Name: it.env.Name, ID: it.env.ID, Delay: it.delay})
		}
	}
	return nil
}

// stepItem is a released step to push.
type stepItem struct {
	env   *Envelope
	delay time.Duration
}

// releasedEnvelope decodes a released step's job and hands it its
// parents' results.
func releasedEnvelope(r jobrdb.WfRelease) (*Envelope, time.Duration, error) {
	payload, delay, err := decodeLink(r.Job)
	if err != nil {
		return nil, 0, fmt.Errorf("step %s: its job: %w", r.ID, err)
	}
	env, err := decodeLinkEnvelope(payload)
	if err != nil {
		return nil, 0, fmt.Errorf("step %s: its job: %w", r.ID, err)
	}
	if env.Step == nil {
		return nil, 0, fmt.Errorf("step %s: its job %s carries no step", r.ID, env.ID)
	}
	if len(r.Results) > 0 {
		env.Step.Inputs = r.Results
	}
	env.Step.Read = r.Read
	return env, delay, nil
}

// stepEngine returns the engine a step on connection is pushed through.
func (e *Engine) stepEngine(ctx context.Context, connection string) (*Engine, error) {
	d, err := DispatcherFor(ctx, connection)
	if err != nil {
		return nil, err
	}
	te, ok := d.(*Engine)
	if !ok {
		return nil, fmt.Errorf("%w: the dispatcher for connection %q is a %T; a step can only be pushed to an *Engine", ErrInvalid, connection, d)
	}
	return te, nil
}

func (e *Engine) workflowRetention() time.Duration {
	if e.cfg.WorkflowRetention > 0 {
		return e.cfg.WorkflowRetention
	}
	return DefaultWorkflowRetention
}

// workflows is the worker's step for workflows (worker_steps.go): a step
// that ended before its worker died is not run again, a success records
// its result in the workflow and pushes the dependents it released, and
// a failure for good fails the workflow, or lets it go on.
type workflows struct{ busEnv }

func (s workflows) before(ctx context.Context, res Reservation, env *Envelope) bool {
	if env.Step == nil || res.Attempts < 2 {
		return false
	}
	o, err := s.e.settleStep(ctx, env.Step.Workflow, jobrdb.WfEnd{Step: env.Step.Step, How: "r", Attempt: res.Attempts})
	if err != nil {
		s.log.Warn("could not tell whether a workflow step ended before; running it", "job", env.Name, "id", env.ID, "workflow", env.Step.Workflow, "step", env.Step.Step, "err", err)
		return false
	}
	switch o.What {
	case "again", "part":
		s.log.Info("workflow step ended before its worker died; acking it without running it again", "job", env.Name, "id", env.ID, "workflow", env.Step.Workflow, "step", env.Step.Step)
		return true // succeeded pushes its released dependents again
	case "dropped":
		s.log.Info("workflow step's workflow has ended; acking it without running it", "job", env.Name, "id", env.ID, "workflow", env.Step.Workflow, "state", o.State)
		return true
	}
	return false
}

func (s workflows) succeeded(ctx context.Context, res Reservation, env *Envelope, fin *Finish) error {
	if env.Step == nil || fin != nil && fin.step != nil { // its ack records its end (workflow_ack.go)
		return nil
	}
	var result []byte
	if fin != nil {
		result = fin.Result
		fin.Result = nil // kept in the workflow, not beside the queue
	}
	o, err := s.e.settleStep(ctx, env.Step.Workflow, jobrdb.WfEnd{Step: env.Step.Step, How: "s", Attempt: res.Attempts, Result: result})
	if err != nil {
		if fin != nil {
			fin.Result = result
		}
		return fmt.Errorf("record the end of step %s of workflow %s: %w", env.Step.Step, env.Step.Workflow, err)
	}
	s.warnRetriedAlone(env, res.Attempts, o)
	return s.follow(ctx, env, o)
}

// warnRetriedAlone warns of a first attempt of a step that had ended for
// its workflow: a step that failed, retried from the failed store. Its
// workflow counted it failed, and its success changes nothing.
func (s workflows) warnRetriedAlone(env *Envelope, attempt int, o jobrdb.WfOutcome) {
	if o.What == "again" && attempt == 1 {
		s.log.Warn("a workflow step retried from the failed store succeeded, but its workflow had counted it failed, and its success releases nothing: retry the workflow instead (Inspector.RetryWorkflow, queue:workflow-retry)",
			"job", env.Name, "id", env.ID, "workflow", env.Step.Workflow, "step", env.Step.Step, "state", o.State)
	}
}

// follow does what a step's end calls for: push the steps it released,
// or, if it failed the workflow, cancel the released ones and run the
// workflow's catch.
func (s workflows) follow(ctx context.Context, env *Envelope, o jobrdb.WfOutcome) error {
	from := &JobInfo{ID: env.ID, Name: env.Name, Queue: env.Queue, Headers: env.Headers}
	if err := s.e.pushSteps(ctx, env.Step.Workflow, o.Released, from); err != nil {
		return err
	}
	if o.What == "failed" {
		s.e.cancelSteps(ctx, env.Step.Workflow, o.Cancel, env.Step.Step, s.log)
		s.runWorkflowCatch(ctx, env.Step.Workflow, env.Queue)
	}
	if o.What == "part" {
		return s.e.releaseRest(ctx, env.Step.Workflow, env.Step.Step, from)
	}
	return nil
}

// releaseRest releases the dependents of step that its end left to
// release: a wide release is made in parts (step_release.lua), each
// part released and, for a workflow in its queue's slot, pushed in one
// call, so that the first dependents run while the rest are released.
func (e *Engine) releaseRest(ctx context.Context, wf, step string, from *JobInfo) error {
	// As in the ack (Worker.ackSteps): pushed in the call where no
	// dispatch middleware must see each push; a listener is told. A
	// workflow in a slot of its own has its parts pushed here.
	home, ok := keyspace.WorkflowHome(wf)
	push, tell := ok && !e.hasDispatchMiddleware(), !e.events.empty()
	for {
		o, pushed, err := e.store.StepRelease(ctx, home, wf, step, push, tell)
		if err != nil {
			return fmt.Errorf("release the dependents of step %s of workflow %s: %w", step, wf, err)
		}
		if pushed {
			e.pushedInAck(o.Released)
		} else if err := e.pushSteps(ctx, wf, o.Released, from); err != nil {
			return err
		}
		if o.What != "part" {
			return nil
		}
	}
}

func (s workflows) failed(ctx context.Context, env *Envelope, cause error) {
	if env.Step == nil {
		return
	}
	why := "failed"
	if cause != nil {
		why = cause.Error()
	}
	o, err := s.e.settleStep(ctx, env.Step.Workflow, jobrdb.WfEnd{Step: env.Step.Step, How: "f", Why: why})
	if err != nil {
		s.log.Error("could not record a workflow step's failure; its workflow waits on it", "job", env.Name, "id", env.ID, "workflow", env.Step.Workflow, "step", env.Step.Step, "err", err)
		return
	}
	if err := s.follow(ctx, env, o); err != nil {
		s.log.Error("pushing the steps a failed step released failed", "workflow", env.Step.Workflow, "step", env.Step.Step, "err", err)
	}
}

func (workflows) ended(context.Context, *Envelope) {}
func (workflows) hasFailWork(env *Envelope) bool   { return env.Step != nil }

// runWorkflowCatch runs the catch callback of workflow wf, if it has one.
func (s busEnv) runWorkflowCatch(ctx context.Context, wf, queue string) {
	b, err := s.e.store.WfCatch(ctx, wf)
	if err != nil {
		s.log.Error("could not read a failed workflow's catch callback", "workflow", wf, "err", err)
		return
	}
	if len(b) == 0 {
		return
	}
	ref, err := decodeCallback(b)
	if err != nil {
		s.log.Error("workflow catch callback does not decode", "workflow", wf, "err", err)
		return
	}
	// Marked before it runs: at most once on this path. A worker that
	// dies before the mark leaves the failure to be made again, and the
	// catch to run then (wf_settle.lua).
	if caught, err := s.e.store.WfCaught(ctx, wf); err != nil || caught {
		if err != nil {
			s.log.Error("could not mark a failed workflow's catch callback as run; it does not run", "workflow", wf, "err", err)
		}
		return
	}
	why, _ := s.e.store.WfWhy(ctx, wf)
	s.runCallback(ctx, queue, "workflow catch", ref, Outcome{JobID: wf, JobName: "workflow", Err: errors.New(why)})
}

// cancelSteps takes released steps out of their queues, or cancels them
// where they run, all but skip.
func (e *Engine) cancelSteps(ctx context.Context, wf string, steps []jobrdb.WfRelease, skip string, log interface {
	Warn(string, ...any)
}) {
	for _, st := range steps {
		if st.ID == skip {
			continue
		}
		env, _, err := releasedEnvelope(st)
		if err != nil {
			log.Warn("a step of an ended workflow does not decode; it is dropped when it runs", "workflow", wf, "step", st.ID, "err", err)
			continue
		}
		err = e.cancelStep(ctx, env)
		if errors.Is(err, ErrNoJob) {
			err = e.forestallStepPush(ctx, env)
		}
		if err != nil && !errors.Is(err, ErrNoJob) && !errors.Is(err, ErrJobFailed) {
			log.Warn("could not cancel a step of an ended workflow; it is dropped when it runs", "workflow", wf, "step", st.ID, "job", env.ID, "err", err)
		}
	}
}

// cancelStep takes a released step's job out of its queue, or cancels
// it where it runs.
func (e *Engine) cancelStep(ctx context.Context, env *Envelope) error {
	_, err := e.inspector().Cancel(ctx, env.Queue, env.ID, 0)
	var stale *StaleCancelError
	for range 3 { // it was reserved meanwhile: cancel the attempt it is at
		if !errors.As(err, &stale) {
			break
		}
		_, err = e.inspector().Cancel(ctx, env.Queue, env.ID, stale.Now)
	}
	return err
}

// forestallStepPush handles a released step found in no queue: it ran
// and ended, or the worker whose step released it has yet to push it.
// Its push marker is set so that push pushes nothing; if the marker was
// set, it was pushed meanwhile, and is cancelled where it now is.
func (e *Engine) forestallStepPush(ctx context.Context, env *Envelope) error {
	te := e
	if env.Connection != "" {
		var err error
		if te, err = e.stepEngine(ctx, env.Connection); err != nil {
			return err
		}
	}
	set, err := te.store.MarkPushed(ctx, te.keys.Chained(te.partitionFor(env.Queue, env.ID), env.ID), te.cfg.StateRetention)
	if err != nil || set {
		return err
	}
	return e.cancelStep(ctx, env)
}

// stepIDs sorts step IDs as numbers, part by part: 2 before 10, 3 before
// 3.0.
func sortStepIDs(ids []string) {
	slices.SortFunc(ids, func(a, b string) int {
		as, bs := strings.Split(a, "."), strings.Split(b, ".")
		for i := 0; i < len(as) && i < len(bs); i++ {
			x, _ := strconv.Atoi(as[i])
			y, _ := strconv.Atoi(bs[i])
			if x != y {
				return x - y
			}
		}
		return len(as) - len(bs)
	})
}
