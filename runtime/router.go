package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// Router maps job names to a typed decoder and a handler: Laravel's
// CallQueuedHandler. Generated Register functions fill it; Register does
// the same by hand. It is safe for concurrent use.
type Router struct {
	mu     sync.RWMutex
	routes map[string]*route
	errs   []error
	// callbacks of chains and batches, by name (callback.go).
	callbacks callbacks
}

// route is one registered job: everything typed is closed over.
type route struct {
	name string
	run  func(ctx context.Context, body []byte) error
	// runAt runs a body of another schema version than the type's own
	// (version), upgrading it first (schema_version.go); nil for a route
	// of no job type.
	runAt   func(ctx context.Context, version int, body []byte) error
	version int
	failed  func(ctx context.Context, env *Envelope, cause error)
	// encrypted: the job type's options say Encrypted, so a worker
	// refuses a plaintext payload for it.
	encrypted bool
	// releasing names the job type's own middleware that release jobs
	// (RateLimited, WithoutOverlapping, ThrottlesExceptions), as built
	// from the zero job; opts are the type's options, if it is a Job.
	releasing []string
	opts      JobOptions
	// typ is the job type the body decodes into (router_types.go).
	typ reflect.Type
	// result: registered with RegisterResult, so a dispatcher may Await
	// the job and its failure wakes it (results.go).
	result bool
}

// NewRouter returns an empty router.
func NewRouter() *Router { return &Router{routes: map[string]*route{}} }

// RouteOption configures one registration.
type RouteOption[T any] func(*routeConfig[T])

type routeConfig[T any] struct {
	failed func(ctx context.Context, job T, err error)
	schema schemaConfig[T] // schema_version.go
}

// OnFailed sets the job's failed hook (Laravel's failed()): it runs once,
// after the job has failed for good and is in the failed store.
func OnFailed[T any](fn func(ctx context.Context, job T, err error)) RouteOption[T] {
	return func(c *routeConfig[T]) { c.failed = fn }
}

// Register routes jobs named name to handle, decoding their body into T.
// Registering a name twice, or an empty name, is recorded as an error
// that Err returns and a worker refuses to start with.
func Register[T any](r *Router, name string, handle func(ctx context.Context, job T) error, opts ...RouteOption[T]) {
	var cfg routeConfig[T]
	for _, o := range opts {
		o(&cfg)
	}
	dec := newJobDecoder(name, cfg.schema) // schema_version.go, wire_decode.go
	rt := &route{
		name:    name,
		version: dec.version,
		run: func(ctx context.Context, body []byte) error {
			job, err := dec.decode(body)
			if err != nil {
				return err
			}
			return runJob(ctx, job, handle) // middleware.go: the job type's middleware
		},
		runAt: func(ctx context.Context, version int, body []byte) error {
			job, err := dec.decodeAt(version, body)
			if err != nil {
				return err
			}
			return runJob(ctx, job, handle)
		},
	}
	rt.typ = reflect.TypeFor[T]()
	rt.encrypted = encryptedType[T]()
	rt.releasing = releasingMiddleware[T]()
	if j, ok := any(*new(T)).(Job); ok {
		rt.opts = j.JobOptions()
	}
	if cfg.failed != nil {
		rt.failed = func(ctx context.Context, env *Envelope, cause error) {
			job, err := dec.decodeAt(env.SchemaVersion, env.Body)
			if err == nil {
				cfg.failed(ctx, job, cause)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case name == "":
		r.errs = append(r.errs, fmt.Errorf("%w: router: job type %T registered with an empty name", ErrInvalid, *new(T)))
	case r.routes[name] != nil:
		r.errs = append(r.errs, fmt.Errorf("%w: router: job %q registered twice", ErrInvalid, name))
	default:
		r.routes[name] = rt
	}
}

// HandleMethod adapts a job type with its own Handle method into a
// handler for Register.
func HandleMethod[T Handler](ctx context.Context, job T) error { return job.Handle(ctx) }

// Err returns the registration errors, if any.
func (r *Router) Err() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return errors.Join(r.errs...)
}

// Names lists the registered job names, sorted.
func (r *Router) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.routes))
	for n := range r.routes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (r *Router) lookup(name string) *route {
	r.mu.RLock()
	rt := r.routes[name]
	r.mu.RUnlock()
	if rt == nil && name == CallbackJobName {
		return r.callbackRoute() // callback_deferred.go
	}
	if rt == nil && name == WorkflowDeadlineJobName {
		return r.workflowDeadlineRoute() // workflow_ops.go
	}
	return rt
}

// Run decodes the job in env and calls its handler. A job with no
// registered handler returns ErrUnknownJob, and a body that does not
// decode returns an error matching ErrDecode; neither calls a handler.
func (r *Router) Run(ctx context.Context, env *Envelope) error {
	rt := r.lookup(env.Name)
	if rt == nil {
		return fmt.Errorf("%w %q (job %s); registered: %v", ErrUnknownJob, env.Name, env.ID, r.Names())
	}
	if v := max(env.SchemaVersion, 1); v != rt.schemaVersion() && rt.runAt != nil {
		return rt.runAt(ctx, v, env.Body) // schema_version.go: upgraded, or ErrNewerVersion
	}
	return rt.run(ctx, env.Body)
}

// RunFailed runs the failed hook of the job in env, if it has one.
func (r *Router) RunFailed(ctx context.Context, env *Envelope, cause error) {
	if rt := r.lookup(env.Name); rt != nil && rt.failed != nil {
		rt.failed(ctx, env, cause)
	}
}

// RunSync runs job's handler in this goroutine, without Redis: Laravel's
// dispatchSync. The job goes through the same encoding as a queued job.
func (r *Router) RunSync(ctx context.Context, job Job) error {
	body, err := job.EncodeJob()
	if err != nil {
		return err
	}
	id := NewID()
	return r.Run(WithJobInfo(ctx, JobInfo{ID: id, Name: job.JobName(), Queue: "sync", Attempt: 1}), &Envelope{ID: id, Name: job.JobName(), Body: body, SchemaVersion: schemaVersionOf(job)})
}
