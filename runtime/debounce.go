package runtime

import (
	"context"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Debounced jobs.
//
// A job is debounced when its options set Debounce (the `debounce`
// annotation, with `debounce_key`) or its dispatch calls
// PendingDispatch.Debounce: of a burst of dispatches with the same
// debounce key, only the last one runs, with its payload, once the
// window has passed since it (trailing edge). Each dispatch extends the
// window, up to DebounceMaxWait after the burst's first dispatch (10
// windows if unset), so a key dispatched without pause still runs.
//
// While the burst lasts, its job waits in the queue's delayed set: each
// dispatch replaces its payload and moves its due time, in one script
// call (runtime/lua/debounce.lua). The job keeps the ID of the burst's
// first dispatch, which every dispatch of the burst returns. Once the
// job falls due (and so when it runs), the next dispatch starts a new
// burst, with a new job. The record of a burst is a hash in the queue's
// slot that expires at the job's due time: nothing else cleans it.
//
// The key is scoped to the job's wire name: two job types never share a
// burst. On a partitioned queue the key picks the partition (a hash of
// it), so every dispatch of a burst reaches the same one.
//
// Dispatch debounces (and PendingDispatch.Dispatch, a chain's Dispatch
// for its first job, whose chain travels in its payload, so the last
// dispatch's chain is the one that runs, and DispatchMany, which sends
// each debounced job on its own, as it does unique jobs). A debounced
// job cannot be unique (a unique job keeps the first dispatch, a
// debounced one the last), have a Delay of its own (the window is its
// delay), or go through a batch (whose count of jobs a burst would
// break), the outbox (DispatchTx), an event's listeners or a schedule:
// those return an error wrapping ErrInvalid that names the conflict.
// The links of a chain after the first are pushed by the worker, and
// are not debounced.

// DebouncedJob is implemented by a job type whose dispatches are
// debounced per value: two dispatches share a burst only if their
// DebounceKeys are equal. The `debounce_key` annotation generates it.
type DebouncedJob interface {
	DebounceKey() string
}

// DebounceKeyOf formats a field's value as a debounce key; generated
// DebounceKey methods call it.
func DebounceKeyOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// defaultMaxWaitWindows is the max wait of a burst, in windows, when none
// is set.
const defaultMaxWaitWindows = 10

// Debounce makes this dispatch one of a burst under key: of the
// dispatches of the job type with this key, only the last runs, once d
// has passed since it, with its payload. It overrides the annotation's
// window and key.
func (p *PendingDispatch) Debounce(key string, d time.Duration) *PendingDispatch {
	if p.deb == nil {
		p.deb = &debounceOverride{}
	}
	p.deb.key, p.deb.window = key, d
	return p
}

// DebounceMaxWait caps how long a burst's job waits, from the burst's
// first dispatch, however often it is dispatched again; it overrides the
// annotation's debounce_max_wait. The default is 10 windows.
func (p *PendingDispatch) DebounceMaxWait(d time.Duration) *PendingDispatch {
	if p.deb == nil {
		p.deb = &debounceOverride{}
	}
	p.deb.maxWait = d
	return p
}

// debounceOverride is what Debounce and DebounceMaxWait set on a
// dispatch.
type debounceOverride struct {
	key             string
	window, maxWait time.Duration
}

// apply puts the override's window and max wait in o.
func (d *debounceOverride) apply(o *JobOptions) {
	if d.window != 0 {
		o.Debounce = d.window
	}
	if d.maxWait != 0 {
		o.DebounceMaxWait = d.maxWait
	}
}

// debounceKey is the key Debounce set, or "".
func (p *PendingDispatch) debounceKey() string {
	if p.deb == nil {
		return ""
	}
	return p.deb.key
}

// debounced reports whether p is a debounced dispatch.
func (p *PendingDispatch) debounced() bool {
	return p.debounceKey() != "" || p.JobOptions().Debounce != 0
}

// debounceSpec is what a debounced dispatch needs: its record's key (the
// wire name, ":", the debounce key), window and max wait.
type debounceSpec struct {
	key             string
	window, maxWait time.Duration
}

// debounceSpec checks p's debounce settings against its other options.
func (p *PendingDispatch) debounceSpec() (debounceSpec, error) {
	o := p.JobOptions() // with this dispatch's window and max wait
	s := debounceSpec{window: o.Debounce, maxWait: o.DebounceMaxWait}
	key := p.debounceKey()
	if key == "" {
		if d, ok := underlying(p.job).(DebouncedJob); ok {
			key = d.DebounceKey()
		}
	}
	name := p.JobName()
	switch {
	case s.window < time.Millisecond:
		return s, fmt.Errorf("%w: debounce %s: want a window of at least 1ms, got %v", ErrInvalid, name, s.window)
	case key == "":
		return s, fmt.Errorf("%w: debounce %s: no debounce key: set debounce_key=Field, implement DebounceKey, or call Debounce(key, d)", ErrInvalid, name)
	case s.maxWait < 0, s.maxWait > 0 && s.maxWait < s.window:
		return s, fmt.Errorf("%w: debounce %s: DebounceMaxWait (%v) must be at least the window (%v)", ErrInvalid, name, s.maxWait, s.window)
	case o.UniqueFor > 0:
		return s, fmt.Errorf("%w: debounce %s: the job is also unique (unique_for): a unique job keeps the first dispatch, a debounced one the last; use one of them", ErrInvalid, name)
	case !p.at.IsZero():
		return s, fmt.Errorf("%w: debounce %s: the job also has At(t) (%v): the debounce window is its delay", ErrInvalid, name, p.at.Format(time.RFC3339Nano))
	case p.DelayDuration() != 0:
		return s, fmt.Errorf("%w: debounce %s: the job also has a delay (%v): the debounce window is its delay", ErrInvalid, name, p.DelayDuration())
	}
	if s.maxWait == 0 {
		s.maxWait = defaultMaxWaitWindows * s.window
	}
	s.key = name + ":" + key
	return s, nil
}

// refuseDebounce returns the error of a debounced job sent through a
// path that does not debounce, or nil.
func (p *PendingDispatch) refuseDebounce() error {
	if !p.debounced() {
		return nil
	}
	return fmt.Errorf("%w: job %s is debounced: only Dispatch and DispatchMany debounce, not a batch, the outbox (DispatchTx), an event's listeners or a schedule; dispatch it on its own", ErrInvalid, p.JobName())
}

var scriptDebounce = mustScript("debounce")

// dispatchDebounced dispatches p as the latest of its burst, and returns
// the ID of the burst's job.
func (e *Engine) dispatchDebounced(ctx context.Context, p *PendingDispatch) (string, error) {
	s, err := p.debounceSpec()
	if err != nil {
		return "", err
	}
	env, err := p.build(e.seal)
	if err != nil {
		return "", err
	}
	if err := ValidateQueueName(env.Queue); err != nil {
		return "", fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	// The partition is picked by the key, so that a burst stays on one.
	queue := e.partitionFor(env.Queue, s.key)
	if err := e.remember(ctx, queue); err != nil {
		return "", err
	}
	id := env.ID
	out := &DispatchCall{Kind: DispatchKindOne, Jobs: []Outgoing{{Envelope: env, Delay: s.window}}}
	err = e.pushThrough(ctx, out, func(ctx context.Context) error {
		var err error
		id, err = e.pushDebounced(ctx, env, queue, s)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	if !e.events.empty() {
		e.events.emit(Event{Kind: JobQueued, Queue: env.Queue, Name: env.Name, ID: id, Delay: s.window})
	}
	return id, nil
}

// pushDebounced runs the debounce call of env on queue, and returns the
// ID of the burst's job. A sealed body is bound to its job's ID
// (crypt.go), and a dispatch that joins a burst takes the burst's ID: so
// a sealed env is sealed again under the burst's ID, and the call made
// again, until the ID it is sealed under is the one it is written under.
func (e *Engine) pushDebounced(ctx context.Context, env *Envelope, queue string, s debounceSpec) (string, error) {
	bound := "0"
	if env.Encrypted {
		bound = "1"
	}
	for range 5 {
		_, payload, cg, err := e.stored(env, s.window, time.Now().UnixMilli(), s.key)
		if err != nil {
			return "", err
		}
		step := jobrdb.Enqueue{Width: jobrdb.WidthEach, Tags: oneJobTags(env.Tags), TagBound: MaxTagJobs}
		step.Add(env.ID, payload, s.window.Milliseconds(), cg)
		c := e.enqueueCall(scriptDebounce, queue, &step, []string{e.keys.Debounce(queue, s.key)},
			s.window.Milliseconds(), s.maxWait.Milliseconds(), bound)
		reply, err := e.store.RunOne(ctx, c).Slice()
		if err != nil {
			return "", pushError(err)
		}
		if len(reply) != 3 {
			return "", fmt.Errorf("unexpected reply %v", reply)
		}
		id, _ := reply[0].(string)
		switch jobrdb.Int(reply[1]) {
		case 2: // the burst's job has another ID: seal under it
		case 3: // the ID is taken: a new one
			id = NewID()
		default:
			return id, nil
		}
		if err := e.resealAs(env, id); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("debounce %s: the burst's job changed five times while this dispatch joined it", env.Name)
}
