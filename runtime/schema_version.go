package runtime

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Versioned jobs. A job type whose wire schema broke (a field renamed,
// removed or retyped) may declare a new version, `//job:version=2
// upgrade=SendEmailV1`: SendEmailV1 is a struct with version 1's fields,
// and its method Upgrade() SendEmail turns one into the new version. The
// generator checks SendEmailV1 against version 1 in the schema lock, and
// generates a JobVersion method and an UpgradeFrom option on the job's
// Register call. A dispatch writes the version into the envelope
// (Envelope.SchemaVersion, absent for 1). A worker runs a body of an
// older version through its upgrade before the handler; one of a newer
// version than it knows goes back to its queue, its attempt unused, to
// wait for a newer worker (giveBackNewer).

// VersionedJob is a job type whose wire schema has a version above 1.
// Generated code implements it for a job with `version=` in its
// annotation.
type VersionedJob interface {
	// JobVersion is the version of the schema the job's EncodeJob writes.
	JobVersion() int
}

// schemaVersionOf is the schema version to write into job's envelope: 0
// (left out, meaning 1) unless the job says more.
func schemaVersionOf(job Job) int {
	if v, ok := underlying(job).(VersionedJob); ok && v.JobVersion() > 1 {
		return v.JobVersion()
	}
	return 0
}

// NewerVersionDelay is how long a job that a worker gave back for a
// newer worker waits before it is ready again, so that a worker that
// finds only such jobs does not spin on them.
const NewerVersionDelay = time.Second

// schemaConfig is what a job type's Register call says about its wire
// schema, through UpgradeFrom, OptionalKeys and Lenient.
type schemaConfig[T any] struct {
	// upgrades decode a body of an older version into T, by version; each
	// is made with the job's name, for messages.
	upgrades map[int]func(job string) func(body []byte) (T, error)
	optional []string
	lenient  bool
}

// UpgradeFrom registers upgrade as the way from version to the job
// type's own: a body of that version decodes into Old, strictly as to
// unknown keys, and upgrade turns it into a T before the handler runs.
// Generated Register calls pass it for `upgrade=`, with Old's Upgrade
// method.
func UpgradeFrom[Old, T any](version int, upgrade func(Old) T) RouteOption[T] {
	return func(c *routeConfig[T]) {
		if c.schema.upgrades == nil {
			c.schema.upgrades = map[int]func(string) func([]byte) (T, error){}
		}
		c.schema.upgrades[version] = func(job string) func([]byte) (T, error) {
			shape := newWireShape(fmt.Sprintf("%s (version %d)", job, version), reflect.TypeFor[Old]())
			shape.required = nil // an older body may lack what its struct added later
			return func(body []byte) (T, error) {
				old, err := decodeStrict[Old](shape, body)
				if err != nil {
					var zero T
					return zero, err
				}
				return upgrade(old), nil
			}
		}
	}
}

// OptionalKeys names wire keys of the job type that a body may lack: its
// fields added since jobs were queued, which the schema lock records.
// Such a field of an older body is left zero.
func OptionalKeys[T any](keys ...string) RouteOption[T] {
	return func(c *routeConfig[T]) { c.schema.optional = append(c.schema.optional, keys...) }
}

// Lenient decodes the job type's bodies as msgpack does by itself:
// unknown keys are skipped and missing fields are left zero (the
// `decode=lenient` key). The default reports both (wire_decode.go).
func Lenient[T any]() RouteOption[T] {
	return func(c *routeConfig[T]) { c.schema.lenient = true }
}

// jobDecoder decodes a job type's bodies of every version it knows.
type jobDecoder[T any] struct {
	version  int // its own, at least 1
	shape    *wireShape
	upgrades map[int]func([]byte) (T, error)
}

var (
	customDecoder = reflect.TypeFor[msgpack.CustomDecoder]()
	unmarshaler   = reflect.TypeFor[msgpack.Unmarshaler]()
)

func newJobDecoder[T any](name string, cfg schemaConfig[T]) *jobDecoder[T] {
	d := &jobDecoder[T]{version: 1}
	if v, ok := any(*new(T)).(VersionedJob); ok {
		d.version = max(v.JobVersion(), 1)
	}
	t := reflect.TypeFor[T]()
	if p := reflect.PointerTo(t); p.Implements(customDecoder) || p.Implements(unmarshaler) {
		t = reflect.TypeFor[int]() // decodes itself: msgpack's own rules, unchecked
	}
	d.shape = newWireShape(name, t)
	d.shape.lenient = cfg.lenient
	d.shape.optional(cfg.optional)
	for v, mk := range cfg.upgrades {
		if d.upgrades == nil {
			d.upgrades = map[int]func([]byte) (T, error){}
		}
		d.upgrades[v] = mk(name)
	}
	return d
}

// decode decodes a body of the type's own version.
func (d *jobDecoder[T]) decode(body []byte) (T, error) {
	return decodeStrict[T](d.shape, body)
}

// decodeAt decodes a body of schema version v (0 meaning 1).
func (d *jobDecoder[T]) decodeAt(v int, body []byte) (T, error) {
	v = max(v, 1)
	if v == d.version {
		return d.decode(body)
	}
	var zero T
	if v > d.version {
		return zero, fmt.Errorf("%w: job %s has schema version %d; this worker knows up to %d", ErrNewerVersion, d.shape.job, v, d.version)
	}
	up := d.upgrades[v]
	if up == nil {
		return zero, fmt.Errorf("%w: job %s has schema version %d, and this worker, of version %d, has no upgrade from it (it upgrades from %v): keep the upgrade of every version that may still be queued (docs/changing-jobs.md)",
			ErrDecode, d.shape.job, v, d.version, slices.Sorted(mapKeysOf(d.upgrades)))
	}
	return up(body)
}

func mapKeysOf[V any](m map[int]V) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// schemaVersion is the newest schema version of the route's job type
// that the worker knows: 1 unless it declares more.
func (rt *route) schemaVersion() int { return max(rt.version, 1) }

// newerThanKnown says whether env was encoded with a schema version
// newer than its route knows.
func (rt *route) newerThanKnown(env *Envelope) bool { return env.SchemaVersion > rt.schemaVersion() }

// newerLog remembers the job names and versions a worker has logged a
// give-back of, so that it logs each once.
type newerLog struct{ seen sync.Map }

// giveBackNewer puts back a job of a schema version newer than this
// worker knows, its attempt unused, after NewerVersionDelay, for a newer
// worker to take during a rolling deploy. It logs the first of each job
// name and version, counts each in WorkerStats.GivenBackNewer, and
// emits JobReleased with ErrNewerVersion.
func (w *Worker) giveBackNewer(ctx context.Context, res Reservation, env *Envelope, known int) {
	key := fmt.Sprintf("%s@%d", env.Name, env.SchemaVersion)
	if _, logged := w.newer.seen.LoadOrStore(key, true); !logged {
		w.log.Warn("job of a newer schema version than this worker knows; giving such jobs back, unused, for a newer worker",
			"queue", res.Queue, "job", env.Name, "id", res.ID, "version", env.SchemaVersion, "known", known)
	}
	ev := Event{Worker: w.cfg.Name, Queue: res.Queue, Name: env.Name, ID: res.ID, Attempt: res.Attempts - 1}
	cause := fmt.Errorf("%w: version %d, this worker knows up to %d", ErrNewerVersion, env.SchemaVersion, known)
	w.givenBackNewer.Add(1)
	w.noteNewer(res.Queue, env.Name, env.SchemaVersion, known)
	w.releaseWith(ctx, res, ev, ReleaseOpts{Delay: NewerVersionDelay, Deferral: true}, cause)
}
