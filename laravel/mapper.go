package laravel

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobgen/jobgen/laravel/phpserial"
	"github.com/jobgen/jobgen/runtime"
)

// Mapper maps PHP job classes to Go job types, both ways: a Worker
// decodes a Laravel payload into the Go type and runs its handler from a
// runtime.Router; a Dispatcher encodes a Go job as the payload of its
// PHP class. Generated code fills it with the jobs annotated
// //job:laravel=App\Jobs\X; Map and MapString do so by hand. It is safe
// for concurrent use once filled.
type Mapper struct {
	mu      sync.RWMutex
	byClass map[string]*mapping // PHP class, or "Class@method" of a string job
	byType  map[reflect.Type]*mapping
	errs    []error
	enc     *Encrypter // the app's keys, for ShouldBeEncrypted jobs
}

// UseEncrypter gives the mapper the app's keys (NewEncrypter), so that it
// opens the data.command of ShouldBeEncrypted jobs that PHP dispatched,
// and seals that of the classes mapped with MapEncrypted. Call it before
// the mapper is used.
func (m *Mapper) UseEncrypter(e *Encrypter) {
	m.mu.Lock()
	m.enc = e
	m.mu.Unlock()
}

// command returns p's data.command as a serialized job, opened if it is
// sealed, as CallQueuedHandler does: a command that is not an object
// ("O:...") is taken for sealed.
func (m *Mapper) command(p Payload) (CommandData, bool, error) {
	cmd, ok := p.Command()
	if !ok || strings.HasPrefix(cmd.Command, "O:") {
		return cmd, ok, nil
	}
	if err := commandNotAJob(cmd.CommandName, cmd.Command); err != nil {
		return cmd, true, err
	}
	m.mu.RLock()
	enc := m.enc
	m.mu.RUnlock()
	if enc == nil {
		return cmd, true, fmt.Errorf("%w: data.command of %s is sealed (ShouldBeEncrypted), and the mapper has no key: call Mapper.UseEncrypter with the app's APP_KEY", ErrUnmappable, cmd.CommandName)
	}
	plain, err := enc.openCommand(cmd.Command)
	if err != nil {
		return cmd, true, err
	}
	cmd.Command = plain
	return cmd, true, nil
}

// NewMapper returns an empty mapper.
func NewMapper() *Mapper {
	return &Mapper{byClass: map[string]*mapping{}, byType: map[reflect.Type]*mapping{}}
}

// mapping is one PHP class and its Go type.
type mapping struct {
	class string // PHP class; for a string job, "Class@method"
	name  string // the Go job's wire name, as the router knows it
	typ   reflect.Type
	str   bool // a string job: data is JSON, no serialize()
	// sealed: the PHP class is ShouldBeEncrypted; a Go dispatch seals
	// data.command.
	sealed bool
	// decode decodes a body that body returned into a T (for its unique
	// lock).
	decode func(body []byte) (any, error)
	// body decodes the PHP side into the Go job's runtime.Encode body.
	body func(p Payload) ([]byte, error)
	// data encodes a Go job as Payload.Data.
	data func(job any, queue string, delay time.Duration) (json.RawMessage, error)
}

// Map maps the queued PHP class (such as App\Jobs\SendWelcomeEmail) to
// the Go struct T, routed under name (the name its handler is
// registered with; for a runtime.Job, its JobName). Its fields map to
// the class's properties as the php struct tag says (see the package
// doc), by name by default. A mapping twice of a class or a type is an
// error that Err returns.
func Map[T any](m *Mapper, class, name string) {
	t := reflect.TypeFor[T]()
	mp := &mapping{class: class, name: name, typ: t}
	if t.Kind() != reflect.Struct {
		m.fail(fmt.Errorf("%w: laravel.Map: %s is not a struct", runtime.ErrInvalid, t))
		return
	}
	if _, err := fieldsOf(t); err != nil {
		m.fail(err)
		return
	}
	mp.body = func(p Payload) ([]byte, error) {
		cmd, ok, err := m.command(p)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, fmt.Errorf("%w: %s: payload has no data.command", ErrUnmappable, class)
		}
		job, err := DecodeCommand[T](cmd.Command, class)
		if err != nil {
			return nil, err
		}
		return runtime.Encode(job)
	}
	mp.decode = func(body []byte) (any, error) { return runtime.Decode[T](body) }
	mp.data = func(job any, queue string, delay time.Duration) (json.RawMessage, error) {
		cmd, err := EncodeCommand(job, class, queue, delay)
		if err != nil {
			return nil, err
		}
		command := string(cmd)
		if mp.sealed {
			m.mu.RLock()
			enc := m.enc
			m.mu.RUnlock()
			if enc == nil {
				return nil, fmt.Errorf("%w: laravel: %s is mapped with MapEncrypted, and the mapper has no key: call Mapper.UseEncrypter with the app's APP_KEY", runtime.ErrInvalid, class)
			}
			if command, err = enc.sealCommand(cmd); err != nil {
				return nil, err
			}
		}
		return phpJSON(CommandData{CommandName: class, Command: command})
	}
	m.add(mp)
}

// MapEncrypted is Map for a PHP class that implements ShouldBeEncrypted:
// a Go dispatch of T seals its data.command with the app's key
// (UseEncrypter), as Laravel does, so that PHP's worker opens it. (Sealed
// commands that PHP dispatched open whatever the mapping.)
func MapEncrypted[T any](m *Mapper, class, name string) {
	Map[T](m, class, name)
	m.mu.Lock()
	if mp := m.byClass[class]; mp != nil && mp.typ == reflect.TypeFor[T]() {
		mp.sealed = true
	}
	m.mu.Unlock()
}

// MapString maps a string job, "Class@method" as Laravel's
// Queue::push('App\Jobs\X@handle', $data) pushes it, to the Go struct T,
// routed under name. The job's data is JSON, decoded into T with
// encoding/json, so it needs no PHP serialization either way.
func MapString[T any](m *Mapper, job, name string) {
	t := reflect.TypeFor[T]()
	if !strings.Contains(job, "@") {
		job += "@fire" // Laravel's default method of a string job
	}
	mp := &mapping{class: job, name: name, typ: t, str: true}
	mp.body = func(p Payload) ([]byte, error) {
		var v T
		if len(p.Data) > 0 && !bytes.Equal(bytes.TrimSpace(p.Data), []byte("{}")) {
			if err := json.Unmarshal(p.Data, &v); err != nil {
				return nil, fmt.Errorf("%w: data of %s does not decode into %s: %v", ErrUnmappable, job, t, err)
			}
		}
		return runtime.Encode(v)
	}
	mp.data = func(v any, _ string, _ time.Duration) (json.RawMessage, error) { return phpJSON(v) }
	m.add(mp)
}

func (m *Mapper) fail(err error) {
	m.mu.Lock()
	m.errs = append(m.errs, err)
	m.mu.Unlock()
}

func (m *Mapper) add(mp *mapping) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case mp.class == "" || mp.name == "":
		m.errs = append(m.errs, fmt.Errorf("%w: laravel: %s mapped with an empty PHP class or job name", runtime.ErrInvalid, mp.typ))
	case m.byClass[mp.class] != nil:
		m.errs = append(m.errs, fmt.Errorf("%w: laravel: PHP job %s mapped twice", runtime.ErrInvalid, mp.class))
	case m.byType[mp.typ] != nil:
		m.errs = append(m.errs, fmt.Errorf("%w: laravel: Go type %s mapped twice", runtime.ErrInvalid, mp.typ))
	default:
		m.byClass[mp.class] = mp
		m.byType[mp.typ] = mp
	}
}

// Err returns the mapping errors, if any.
func (m *Mapper) Err() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return errors.Join(m.errs...)
}

// Classes lists the mapped PHP classes and string jobs, sorted.
func (m *Mapper) Classes() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]string, 0, len(m.byClass))
	for c := range m.byClass {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// classOf says which class a job's payload names, and whether no Go
// type is mapped to it. A payload that does not decode, or names no
// class, is not unmapped: it is no job, and the worker reserves it and
// fails it.
func (m *Mapper) classOf(job []byte) (class string, unmapped bool) {
	class = readHead(job).class
	if class == "" {
		return "", false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return class, m.byClass[class] == nil
}

// forPayload finds the mapping of a popped payload.
func (m *Mapper) forPayload(p Payload) (*mapping, error) {
	key := p.Job
	if cmd, ok := p.Command(); ok {
		key = cmd.CommandName
	} else if p.Job == CallQueuedHandler {
		return nil, fmt.Errorf("%w: the payload is not a Laravel job: its job is %s, and its data has no commandName and command (displayName %q)", ErrUnmappable, CallQueuedHandler, p.DisplayName)
	}
	m.mu.RLock()
	mp := m.byClass[key]
	m.mu.RUnlock()
	if mp == nil {
		return nil, fmt.Errorf("%w %s: no Go type is mapped to it; mapped: %v", runtime.ErrUnknownJob, key, m.Classes())
	}
	return mp, nil
}

// DecodeCommand decodes data.command, PHP's serialize() of a job object
// of class, into T. It refuses another class, closures and Eloquent
// models with an error matching ErrUnmappable. The job's chain
// ($chained) is not part of T: the Worker continues it.
func DecodeCommand[T any](command, class string) (T, error) {
	var job T
	v, err := phpserial.Unmarshal([]byte(command))
	if err != nil {
		return job, fmt.Errorf("%w: data.command of %s: %w", ErrUnmappable, class, err)
	}
	o, ok := v.(*phpserial.Object)
	if !ok || o.Class != class {
		return job, fmt.Errorf("%w: data.command is %s, not an object of %s", ErrUnmappable, phpType(v), class)
	}
	dst := reflect.ValueOf(&job).Elem()
	if err := (fromPHP{root: v, st: &convState{}}).object(o, dst, true); err != nil {
		return job, fmt.Errorf("%s: %w", class, err)
	}
	return job, nil
}

// EncodeCommand returns serialize() of job as an object of class, as
// Laravel's Queueable job would serialize: the job's mapped properties,
// then Queueable's (queue, delay, and the others empty).
func EncodeCommand(job any, class, queue string, delay time.Duration) ([]byte, error) {
	v := reflect.ValueOf(job)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %T is not a struct", ErrUnmappable, job)
	}
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return nil, err
	}
	o := &phpserial.Object{Class: class}
	have := map[string]bool{}
	for _, f := range fields {
		val, err := toPHP(v.FieldByIndex(f.index), "$"+f.php)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", class, err)
		}
		p := phpserial.Prop{Name: f.php, Visibility: f.vis, Value: val}
		if f.declarer {
			p.Declarer = class
		}
		o.Props = append(o.Props, p)
		have[f.php] = true
	}
	var delayVal any
	if delay > 0 {
		delayVal = seconds(delay)
	}
	for _, p := range []phpserial.Prop{
		{Name: "job"}, {Name: "connection"}, {Name: "queue", Value: queue},
		{Name: "chainConnection"}, {Name: "chainQueue"}, {Name: "chainCatchCallbacks"},
		{Name: "delay", Value: delayVal}, {Name: "afterCommit"},
		{Name: "middleware", Value: &phpserial.Array{}}, {Name: "chained", Value: &phpserial.Array{}},
	} {
		if !have[p.Name] {
			o.Props = append(o.Props, p)
		}
	}
	return phpserial.Marshal(o)
}

// newPayload builds the payload Laravel's RedisQueue would push for a
// job of mp with opts, now.
func (mp *mapping) newPayload(job any, opts runtime.JobOptions, queue string, delay time.Duration, now time.Time) (payload []byte, uuid string, err error) {
	data, err := mp.data(job, queue, delay)
	if err != nil {
		return nil, "", err
	}
	p := Payload{
		UUID:          uuid4(),
		DisplayName:   mp.class,
		Job:           CallQueuedHandler,
		FailOnTimeout: opts.FailOnTimeout,
		Data:          data,
		ID:            randomID(),
	}
	if mp.str {
		p.DisplayName, _, _ = strings.Cut(mp.class, "@")
		p.Job = mp.class
	}
	if opts.Tries > 0 {
		p.MaxTries = ptr(int64(opts.Tries))
	}
	if opts.MaxExceptions > 0 {
		p.MaxExceptions = ptr(int64(opts.MaxExceptions))
	}
	if opts.Timeout > 0 {
		p.Timeout = ptr(seconds(opts.Timeout))
	}
	if opts.RetryUntil > 0 {
		p.RetryUntil = ptr(now.Add(opts.RetryUntil).Unix())
	}
	if len(opts.Backoff) > 0 {
		parts := make([]string, len(opts.Backoff))
		for i, d := range opts.Backoff {
			parts[i] = strconv.FormatInt(seconds(d), 10)
		}
		p.Backoff = ptr(strings.Join(parts, ","))
	}
	payload, err = p.Encode()
	return payload, p.UUID, err
}

func ptr[T any](v T) *T { return &v }

// uuid4 returns a random RFC 4122 UUID, as Str::uuid() does.
func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// randomID returns 32 random letters and digits, as Str::random(32).
func randomID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [32]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
