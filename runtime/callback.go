package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Outcome tells a callback why it runs.
type Outcome struct {
	// JobID and JobName are the job whose end made the callback run.
	JobID   string
	JobName string
	// Err is why that job failed, for a chain's catch and a batch's catch;
	// nil otherwise. It is the error the worker saw, not one read back
	// from Redis.
	Err error
	// Batch is the batch's state just after the job was counted, for
	// batch callbacks; nil for a chain's catch.
	Batch *BatchStatus
}

// Callback is a named function that chains and batches run when they
// end: a chain's catch, a batch's then, catch and finally. A chain or
// batch carries only the callback's name and its encoded argument, so
// the callback survives a restart: every worker that may run the jobs
// registers it with RegisterCallback. Declare callbacks as package-level
// variables, so that dispatchers and workers share them.
//
//	var reportFailed = runtime.NewCallback("reports.failed",
//		func(ctx context.Context, r Report, o runtime.Outcome) error {
//			return notify(ctx, r.Owner, o.Err)
//		})
//
//	runtime.RegisterCallback(router, reportFailed)
//	runtime.Chain(a, b).Catch(reportFailed.With(Report{Owner: "ops"})).Dispatch(ctx)
type Callback[T any] struct {
	name string
	fn   func(ctx context.Context, arg T, o Outcome) error
}

// NewCallback names fn. The name must be stable across deployments, as
// the job wire names are.
//
// A callback made in a package variable's initializer is one the program
// defines: Router.CheckCallbacks, and so `queue:work`, refuse a router
// that does not register it.
func NewCallback[T any](name string, fn func(ctx context.Context, arg T, o Outcome) error) *Callback[T] {
	noteDefinition(name) // callback_deferred.go
	return &Callback[T]{name: name, fn: fn}
}

// Name returns the callback's name.
func (c *Callback[T]) Name() string { return c.name }

// With returns a reference to the callback with its argument, to hand to
// a chain or a batch. The argument is encoded with msgpack now; an
// encoding error is returned by the dispatch that carries it.
func (c *Callback[T]) With(arg T) CallbackRef {
	b, err := Encode(arg)
	return CallbackRef{Name: c.name, Arg: b, err: err}
}

// CallbackRef names a registered callback and carries its encoded
// argument.
type CallbackRef struct {
	Name string `msgpack:"n"`
	Arg  []byte `msgpack:"a,omitempty"`
	err  error
}

func (c CallbackRef) check() error {
	switch {
	case c.err != nil:
		return fmt.Errorf("callback %s: argument: %w", c.Name, c.err)
	case c.Name == "":
		return fmt.Errorf("%w: callback has no name", ErrInvalid)
	}
	return nil
}

func (c CallbackRef) encode() ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return msgpack.Marshal(&c)
}

func decodeCallback(b []byte) (CallbackRef, error) {
	var c CallbackRef
	err := msgpack.Unmarshal(b, &c)
	return c, err
}

// callbacks is a router's registry of callbacks by name.
type callbacks map[string]func(ctx context.Context, arg []byte, o Outcome) error

// RegisterCallback lets r's workers run c. Registering a name twice, or
// an empty name, is recorded as an error that Router.Err returns.
func RegisterCallback[T any](r *Router, c *Callback[T]) {
	run := func(ctx context.Context, arg []byte, o Outcome) error {
		v, err := Decode[T](arg)
		if err != nil {
			return fmt.Errorf("%w: argument of callback %s does not decode into %T: %v", ErrDecode, c.name, v, err)
		}
		return c.fn(ctx, v, o)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case c.name == "":
		r.errs = append(r.errs, fmt.Errorf("%w: router: callback registered with an empty name", ErrInvalid))
	case r.callbacks[c.name] != nil:
		r.errs = append(r.errs, fmt.Errorf("%w: router: callback %q registered twice", ErrInvalid, c.name))
	default:
		if r.callbacks == nil {
			r.callbacks = callbacks{}
		}
		r.callbacks[c.name] = run
	}
}

// RunCallback runs the callback ref names with its argument. A panic in
// the callback is returned as a *PanicError.
func (r *Router) RunCallback(ctx context.Context, ref CallbackRef, o Outcome) (err error) {
	r.mu.RLock()
	run := r.callbacks[ref.Name]
	r.mu.RUnlock()
	if run == nil {
		return fmt.Errorf("%w: %q", ErrUnknownCallback, ref.Name)
	}
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p}
		}
	}()
	return run(ctx, ref.Arg, o)
}

// callbackTimeout bounds one run of a callback by a worker.
const callbackTimeout = time.Minute

// runCallback runs a callback for the worker and logs its error: a
// callback's failure changes nothing about the jobs. It runs while the
// job that made it due is settled, after the heartbeat stopped renewing
// that job's lease, so it gets at most half the lease (RetryAfter), and
// at most callbackTimeout: a callback outliving the lease would run again
// beside the job's next run.
//
// A callback this worker has no registration for is queued as a job on
// queue, for a worker that has it (callback_deferred.go).
func (b busEnv) runCallback(ctx context.Context, queue, what string, ref CallbackRef, o Outcome) {
	ctx, cancel := context.WithTimeout(ctx, min(callbackTimeout, b.retryAfter/2))
	defer cancel()
	err := b.r.RunCallback(ctx, ref, o)
	if errors.Is(err, ErrUnknownCallback) {
		b.deferCallback(ctx, queue, what, ref, o)
		return
	}
	if err != nil {
		b.log.Error(what+" callback failed", "callback", ref.Name, "job", o.JobName, "id", o.JobID, "err", err)
	}
}
