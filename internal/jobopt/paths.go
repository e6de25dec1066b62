package jobopt

// The dispatch paths, and what each option does on each: the table that
// runtime's composition test (runtime/composition_test.go) runs, cell by
// cell, against a real worker, and that docs/jobs.md shows. A path or an
// option added here without its driver in that test fails it.

// Path is one way a job reaches its queue.
type Path struct {
	// Name names the path in the composition test's subtests.
	Name string
	// Call says how it is called, for the docs.
	Call string
}

// Paths is every dispatch path.
var Paths = []Path{
	{Name: "Dispatch", Call: "`Dispatch`, `PendingDispatch.Dispatch`"},
	{Name: "DispatchMany", Call: "`DispatchMany`"},
	{Name: "PendingMany", Call: "`NewPendingMany(jobs)`, its `OnQueue`, `OnConnection` and `Delay`, `.Dispatch`"},
	{Name: "PushMany", Call: "`Engine.PushMany` of `PendingDispatch.Envelope()`s"},
	{Name: "PushRaw", Call: "`PushRaw`"},
	{Name: "DispatchTx", Call: "`DispatchTx`, then the relay"},
	{Name: "DispatchManyTx", Call: "`DispatchManyTx`, then the relay"},
	{Name: "ChainLink", Call: "a chain's second link (`runtime.Chain`, `WithChain`), pushed by the worker"},
	{Name: "Batch", Call: "`NewBatch(jobs...).Dispatch`"},
	{Name: "Schedule", Call: "a tick of a `schedule.Schedule` entry"},
	{Name: "Listener", Call: "a queued listener of an event (`Fire`)"},
	{Name: "Debounced", Call: "a debounced dispatch (`PendingDispatch.Debounce`)"},
	{Name: "WorkflowStep", Call: "a workflow's step (`AddStep`), released by its parent and pushed by that step's worker, or, for a step of one parent that needs no result, by the parent's ack (step_ack)"},
	{Name: "FailedRetry", Call: "a retry from the failed store (`FailedStore.Retry`)"},
	{Name: "FailedRetrySQL", Call: "a retry from a failed store in PostgreSQL (`EngineConfig.FailedStore`, `failedsql`)"},
}

// Pairs are the options that meet on one job, beyond each alone, as
// rows of the table: GroupLimit stands for a job in a group
// (runtime.GroupedJob) with a limit. The pairs with Debounce are the
// Debounced path's column.
var Pairs = [][]string{
	{"UniqueFor", "GroupLimit"},
	{"Encrypted", "GroupLimit"},
	{"Delay", "GroupLimit"},
}

// Effect is what an option does on a path.
type Effect int

// The effects.
const (
	// Works: the job the worker runs carries the option, and its effect
	// shows.
	Works Effect = iota + 1
	// Refused: the dispatch returns an error, and nothing runs.
	Refused
	// NotApplied: the job runs, without the option's effect.
	NotApplied
	// NoWay: the path has no way to set the option.
	NoWay
)

// Outcome is what one option does on one path.
type Outcome struct {
	Effect Effect
	// Err names the runtime error a refusal matches with errors.Is, such
	// as "ErrInvalid".
	Err string
	// Names are words the message of a refusal holds: what it refuses,
	// and where.
	Names []string
	// Why says why, for the docs; "" for Works.
	Why string
}

// The reasons shared by several cells.
var (
	pushManyIsLow = "`PushMany` pushes the envelopes it is given, to its own engine; the unique lock, the debounce and the connection are `Dispatch`'s"
	noOptions     = Outcome{Effect: NoWay, Why: "`PushRaw` takes a queue, a wire name and an encoded body: no options"}
	atRefused     = func(where, why string) Outcome {
		return Outcome{Effect: Refused, Err: "ErrInvalid", Names: []string{"At(t)", where}, Why: why}
	}
	atDispatch = Outcome{Effect: NotApplied, Why: "decided when the job was dispatched: a retry pushes the job back ready at once, without a unique lock"}
	// notAStep is Needs on every path: they dispatch jobs, not steps.
	notAStep = Outcome{Effect: Refused, Err: "ErrInvalid", Names: []string{"needs", "workflow"}, Why: "a job that needs results runs only as a step of a workflow (`AddTo`, `SpawnAfter`), handed them"}
)

// init gives Needs its outcome on every path but those with no way to
// set it.
func init() {
	for _, p := range Paths {
		if _, ok := outcomes[p.Name]["Needs"]; !ok {
			if outcomes[p.Name] == nil {
				outcomes[p.Name] = map[string]Outcome{}
			}
			outcomes[p.Name]["Needs"] = notAStep
		}
	}
}

// debounceRefused is the refusal of a debounced job on path, whose
// error names it as where.
func debounceRefused(where string) Outcome {
	return Outcome{Effect: Refused, Err: "ErrInvalid", Names: []string{"debounced", where},
		Why: "only `Dispatch` and `DispatchMany` debounce"}
}

// stepDebounceRefused is the refusal of a debounced job as a workflow's
// step.
var stepDebounceRefused = Outcome{Effect: Refused, Err: "ErrInvalid", Names: []string{"debounced", "step"},
	Why: "a step is released once, by its parents: it is not debounced"}

// outcomes lists, per path, the options that do not simply work there.
var outcomes = map[string]map[string]Outcome{
	"PushMany": {
		"Connection":      {Effect: NotApplied, Why: pushManyIsLow},
		"UniqueFor":       {Effect: NotApplied, Why: pushManyIsLow},
		"Debounce":        {Effect: NotApplied, Why: pushManyIsLow},
		"DebounceMaxWait": {Effect: NotApplied, Why: pushManyIsLow},
	},
	"PushRaw": {
		"Connection": noOptions, "Tries": noOptions, "Backoff": noOptions, "Timeout": noOptions,
		"RetryUntil": noOptions, "MaxExceptions": noOptions, "FailOnTimeout": noOptions,
		"Delay": noOptions, "UniqueFor": noOptions, "Debounce": noOptions, "DebounceMaxWait": noOptions,
		"Encrypted": noOptions, "Tags": noOptions, "GroupLimit": noOptions, "At": noOptions, "Needs": noOptions,
	},
	"DispatchMany": {
		"At": {Effect: NoWay, Why: "`DispatchMany` takes the jobs alone: `NewPendingMany(jobs).At(t)` is the PendingMany path"},
	},
	"DispatchTx": {
		"Debounce":        debounceRefused("DispatchTx"),
		"DebounceMaxWait": debounceRefused("DispatchTx"),
	},
	"DispatchManyTx": {
		"Debounce":        debounceRefused("DispatchTx"),
		"DebounceMaxWait": debounceRefused("DispatchTx"),
	},
	"ChainLink": {
		"UniqueFor": {Effect: Refused, Err: "ErrInvalid", Names: []string{"unique", "chain"},
			Why: "the links of a chain after the first take no unique lock"},
		"Debounce": {Effect: Refused, Err: "ErrInvalid", Names: []string{"debounced", "chain"},
			Why: "the links of a chain after the first are pushed by the worker, each on its own, not debounced"},
		"DebounceMaxWait": {Effect: Refused, Err: "ErrInvalid", Names: []string{"debounced", "chain"},
			Why: "the links of a chain after the first are pushed by the worker, each on its own, not debounced"},
		"At": atRefused("chain", "a chain's link after the first is pushed when the one before succeeds, with a delay from then"),
	},
	"WorkflowStep": {
		"Connection": {Effect: Refused, Err: "ErrInvalid", Names: []string{"connection", "step"},
			Why: "the worker that runs a step records its end in the workflow through its own engine's keys: a step's connection must share the workflow's Redis and key prefix, and the test's other connection has a prefix of its own"},
		"UniqueFor": {Effect: Refused, Err: "ErrInvalid", Names: []string{"unique_for", "step"},
			Why: "a step is released once, by its parents, and takes no unique lock"},
		"Debounce":        stepDebounceRefused,
		"DebounceMaxWait": stepDebounceRefused,
		"At":              atRefused("step", "a step runs when its parents have succeeded; its delay (or `StepDelay`) counts from then"),
	},
	"Batch": {
		"Connection": {Effect: Refused, Err: "ErrInvalid", Names: []string{"connection", "batch"},
			Why: "the jobs of a batch go through the batch's connection"},
		"UniqueFor": {Effect: Refused, Err: "ErrInvalid", Names: []string{"unique", "batch"},
			Why: "the jobs of a batch take no unique lock"},
		"Debounce":        debounceRefused("batch"),
		"DebounceMaxWait": debounceRefused("batch"),
	},
	"Schedule": {
		"Debounce":        debounceRefused("schedule"),
		"DebounceMaxWait": debounceRefused("schedule"),
		"At":              atRefused("schedule", "each tick of a schedule runs at its own time; `At` is for one dispatch"),
	},
	"Listener": {
		"UniqueFor": {Effect: Refused, Err: "ErrInvalid", Names: []string{"unique", "listener"},
			Why: "an event's queued listeners are pushed in one call, and a unique lock would be a second"},
		"Debounce":        debounceRefused("listeners"),
		"DebounceMaxWait": debounceRefused("listeners"),
		"GroupLimit":      {Effect: NoWay, Why: "a listener's job carries its event and nothing else: it has no group"},
		"Needs":           {Effect: NoWay, Why: "a listener's job carries its event and nothing else: jobgen refuses `needs=` on a listener"},
		"At":              {Effect: NoWay, Why: "a queued listener's options are its type's: `Fire` has no dispatch to set `At` on"},
	},
	"Debounced": {
		"UniqueFor": {Effect: Refused, Err: "ErrInvalid", Names: []string{"unique", "debounce"},
			Why: "a unique job keeps the first dispatch, a debounced one the last"},
		"Delay": {Effect: Refused, Err: "ErrInvalid", Names: []string{"delay", "debounce"},
			Why: "the debounce window is the job's delay"},
		"At": atRefused("debounce", "the debounce window is the job's delay"),
	},
	"FailedRetry": {
		"Delay": atDispatch, "UniqueFor": atDispatch, "Debounce": atDispatch, "DebounceMaxWait": atDispatch, "At": atDispatch,
	},
	"FailedRetrySQL": {
		"Delay": atDispatch, "UniqueFor": atDispatch, "Debounce": atDispatch, "DebounceMaxWait": atDispatch, "At": atDispatch,
	},
}

// Expect returns what option (a Name of All or Overrides) does on path (a Name of
// Paths).
func Expect(option, path string) Outcome {
	if o, ok := outcomes[path][option]; ok {
		return o
	}
	return Outcome{Effect: Works}
}

// ExpectAll returns what options, set together, do on path: the first
// refusal among them if one is refused, else the first NoWay if the path
// has no way to set one, else Works if every one works; otherwise
// (some work, some are not applied) the Outcome of the first that is not
// applied.
func ExpectAll(options []string, path string) Outcome {
	var noWay, notApplied *Outcome
	for _, name := range options {
		o := Expect(name, path)
		switch o.Effect {
		case Refused:
			return o
		case NoWay:
			if noWay == nil {
				noWay = &o
			}
		case NotApplied:
			if notApplied == nil {
				notApplied = &o
			}
		}
	}
	switch {
	case noWay != nil:
		return *noWay
	case notApplied != nil:
		return *notApplied
	}
	return Outcome{Effect: Works}
}
