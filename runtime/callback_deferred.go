package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/jobgen/jobgen/internal/partition"
)

// A callback that the worker running it has no registration for is not
// dropped: it is queued as a job of its own, CallbackJobName, on the
// queue of the job that made it due. A worker that has the callback runs
// it; one that does not fails that job at once, so the callback waits in
// the failed store, with ErrUnknownCallback as its reason, for
// `queue:retry` once a deploy registers it.

// CallbackJobName is the wire name of a queued callback run.
const CallbackJobName = "jobgen.Callback"

// callbackRun is a callback run queued as a job.
type callbackRun struct {
	Ref   CallbackRef  `msgpack:"r"`
	What  string       `msgpack:"w"` // "chain catch", "batch then", …
	JobID string       `msgpack:"i"`
	Job   string       `msgpack:"j"` // the name of the job it is about
	Err   string       `msgpack:"e,omitempty"`
	Batch *BatchStatus `msgpack:"b,omitempty"`
	queue string
}

func (callbackRun) JobName() string { return CallbackJobName }

// JobOptions: one try. A callback that fails is logged and changes
// nothing, as when it runs in place; one that is unknown fails into the
// failed store.
func (c callbackRun) JobOptions() JobOptions { return JobOptions{Queue: c.queue, Tries: 1} }

func (c callbackRun) EncodeJob() ([]byte, error) { return Encode(c) }

// deferCallback queues a run of ref, whose callback this worker does not
// have, on queue.
func (b busEnv) deferCallback(ctx context.Context, queue, what string, ref CallbackRef, o Outcome) {
	queue, _, _ = strings.Cut(queue, partition.Sep) // a partitioned queue takes it on any partition
	run := callbackRun{Ref: ref, What: what, JobID: o.JobID, Job: o.JobName, Batch: o.Batch, queue: queue}
	if o.Err != nil {
		run.Err = o.Err.Error()
	}
	id, err := b.e.Dispatch(ctx, NewPendingDispatch(run))
	if err != nil {
		b.log.Error(what+" callback is not registered on this worker, and queueing it for one that has it failed; it is lost",
			"callback", ref.Name, "job", o.JobName, "id", o.JobID, "err", err)
		return
	}
	b.log.Warn(what+" callback is not registered on this worker; queued as a job for a worker that has it (it fails into the failed store on one that has not; retry it once the callback is registered)",
		"callback", ref.Name, "job", o.JobName, "id", o.JobID, "callback_job", id, "queue", queue)
}

// callbackRoute runs queued callback runs through r's callbacks.
func (r *Router) callbackRoute() *route {
	return &route{name: CallbackJobName, run: func(ctx context.Context, body []byte) error {
		run, err := Decode[callbackRun](body)
		if err != nil {
			return fmt.Errorf("%w: queued callback run does not decode: %v", ErrDecode, err)
		}
		o := Outcome{JobID: run.JobID, JobName: run.Job, Batch: run.Batch}
		if run.Err != "" {
			o.Err = errors.New(run.Err)
		}
		err = r.RunCallback(ctx, run.Ref, o)
		if errors.Is(err, ErrUnknownCallback) {
			return FailRequest(fmt.Errorf("%s callback: %w; register it with runtime.RegisterCallback and retry this job", run.What, err))
		}
		return err
	}}
}

// definedCallbacks are the callbacks made by NewCallback in a package
// variable's initializer: the ones a program defines, which every worker
// of it should register.
var definedCallbacks struct {
	mu    sync.Mutex
	where map[string]string // name -> file:line of the NewCallback call
}

// noteDefinition records a callback made while packages initialize.
func noteDefinition(name string) {
	pcs := make([]uintptr, 32)
	n := callers(3, pcs)
	frames := callersFrames(pcs[:n])
	var at string
	for {
		f, more := frames.Next()
		if at == "" {
			at = fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
		}
		if f.Function == "runtime.doInit1" || f.Function == "runtime.doInit" {
			definedCallbacks.mu.Lock()
			if definedCallbacks.where == nil {
				definedCallbacks.where = map[string]string{}
			}
			definedCallbacks.where[name] = at
			definedCallbacks.mu.Unlock()
			return
		}
		if !more {
			return
		}
	}
}

// MissingCallbacks lists the callbacks that this program defines (with
// NewCallback in a package variable's initializer) but that r has no
// registration for, each as "name (file:line)", sorted. A worker of r
// would queue their runs for another worker; `queue:work` refuses to
// start while the list is not empty.
func (r *Router) MissingCallbacks() []string {
	definedCallbacks.mu.Lock()
	defer definedCallbacks.mu.Unlock()
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for name, at := range definedCallbacks.where {
		if r.callbacks[name] == nil {
			out = append(out, name+" ("+at+")")
		}
	}
	slices.Sort(out)
	return out
}

// missingCallbacksError is the error of a router with MissingCallbacks.
func missingCallbacksError(missing []string) error {
	return fmt.Errorf("%w: callbacks defined but not registered on the router: %s; register each with runtime.RegisterCallback(router, cb)",
		ErrUnknownCallback, strings.Join(missing, ", "))
}

// CheckCallbacks returns an error naming the callbacks this program
// defines that r does not register (MissingCallbacks), or nil.
func (r *Router) CheckCallbacks() error {
	if m := r.MissingCallbacks(); len(m) > 0 {
		return missingCallbacksError(m)
	}
	return nil
}
