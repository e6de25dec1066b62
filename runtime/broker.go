package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Broker is the engine's low-level side: it reserves jobs under a lease
// and settles them by compare-and-set on the reservation's token (ack,
// release, extend, fail), moves due and expired jobs back to ready
// (migrate), and waits for pushes. A Worker does all of this; most
// programs never call a Broker. It is public for workers that run jobs of
// another format on jobgen's engine, such as the Laravel bridge, and for
// tests that drive a reservation by hand.
//
// Every settle acts only if the token it names is still the job's current
// one, and says which refs it no longer held (a *LeaseLostError).
// A Broker holds nothing of its own and is safe for concurrent use.
type Broker struct {
	e *Engine
}

// NewBroker returns the low-level side of e.
func NewBroker(e *Engine) *Broker { return &Broker{e: e} }

// broker is NewBroker, for the engine's and the worker's own use.
func (e *Engine) broker() *Broker { return &Broker{e: e} }

// Ref names one reservation of a job: the job and the token it was
// reserved under. Ack, release, extend and fail act only if the token is
// still the job's current one.
type Ref struct {
	Queue string
	ID    string
	Token string
}

// Reservation is a job taken from a queue under a lease.
type Reservation struct {
	Ref
	// Attempts counts reservations of the job, this one included.
	Attempts int
	// Exceptions counts earlier attempts that ended in an exception.
	Exceptions int
	// Payload is the encoded envelope as stored, without its ID and
	// perhaps its queue; decode it with DecodeEnvelope(Queue, ID, Payload).
	Payload []byte
	// LeaseUntil is when the lease runs out (Redis clock) unless extended.
	LeaseUntil time.Time
	// Err, if set, is a *MalformedStateError: the job's state entry in
	// Redis was malformed, so its counts are lost and Attempts and
	// Exceptions are 0. The job is reserved all the same, for the caller
	// to fail (Broker.Fail) with Err rather than run it, as a Worker does.
	Err error
}

// ReserveResult is the result of one Reserve: the jobs taken, and when
// the next delayed job falls due or lease runs out. A batch of jobs is a
// PendingBatch.
type ReserveResult struct {
	Jobs []Reservation
	// Now is the Redis clock when the jobs were reserved.
	Now time.Time
	// NextDue is when the earliest delayed job falls due; zero if none.
	NextDue time.Time
	// NextExpiry is the earliest lease deadline of other reserved jobs;
	// zero if none.
	NextExpiry time.Time
	// clock is the Redis clock, to the microsecond, when the reserve
	// ran.
	clock time.Time
	// open is when the rate of queue openQueue (a physical queue) lets
	// more jobs through, if it held this reserve back; zero if none did.
	open      time.Time
	openQueue string
	// limited says the queue has a concurrency limit: settles of its
	// jobs ring its doorbell, for the worker a full limit keeps waiting.
	limited bool
}

// Migration reports one Migrate call.
type Migration struct {
	Now        time.Time // the Redis clock, to the microsecond
	Delayed    int       // delayed jobs moved to ready
	Expired    int       // expired reservations moved to ready
	NextDue    time.Time
	NextExpiry time.Time
}

func (e *Engine) migrateCall(queue string) call {
	qk := e.keys.Queue(queue)
	return call{Script: scriptMigrate, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Notify}, Args: []any{e.cfg.MigrateLimit}}
}

func parseMigration(cmd jobrdb.Reply) (Migration, error) {
	v, err := cmd.Int64Slice()
	if err != nil {
		return Migration{}, err
	}
	if len(v) != 6 {
		return Migration{}, fmt.Errorf("migrate: unexpected reply %v", v)
	}
	return migrationOf(v[0], v[1:]), nil
}

// migrationOf reads what migrate did at now ms: the fields of its reply
// after now (lib/migrate_due.lua's four, and the µs past now), which a
// reserve reply carries too.
func migrationOf(now int64, f []int64) Migration {
	return Migration{
		Now:     msTime(now).Add(time.Duration(f[4]) * time.Microsecond),
		Delayed: int(f[0]), Expired: int(f[1]),
		NextDue: msTime(f[2]), NextExpiry: msTime(f[3]),
	}
}

// reserveCall is the reserve script call for up to n jobs of queue, and
// the fresh token it reserves them under. The script migrates the queue
// first.
func (e *Engine) reserveCall(queue string, n int, lease time.Duration, hold bool) (call, string) {
	qk := e.keys.Queue(queue)
	token := newToken()
	args := []any{n, lease.Milliseconds(), token, e.retryWindow(), e.cfg.MigrateLimit}
	if hold {
		args = append(args, "1")
	}
	keys := []string{qk.Ready, qk.Reserved, qk.Payloads, qk.State, qk.Notify, qk.Paused, e.callsKey(queue), qk.Delayed, qk.Settings,
		qk.GroupOf, qk.GroupWait, qk.GroupRing, qk.GroupActive, qk.GroupSeq, qk.GroupRunning}
	return call{Script: scriptReserve, Keys: keys, Args: args}, token
}

// heldPrefix starts the token of a held reservation (reserve.lua).
const heldPrefix = "h"

// held reports whether r is held: reserved, and not started yet.
func (r Ref) held() bool { return strings.HasPrefix(r.Token, heldPrefix) }

// reserveHead is the length of a reserve reply before its jobs: now,
// the lease deadline, what its migrate did (the fields of a migrate
// reply after its now), whether the queue has a concurrency limit, and
// when its rate lets more jobs through.
const reserveHead = 9

// parseReserve reads the reply of a reserve call made with token; held
// jobs come under the held token, but for malformed ones.
func parseReserve(queue, token string, hold bool, reserved jobrdb.Reply) (ReserveResult, error) {
	reply, err := reserved.Slice()
	if err != nil {
		return ReserveResult{}, err
	}
	if len(reply) < reserveHead || (len(reply)-reserveHead)%4 != 0 {
		return ReserveResult{}, fmt.Errorf("unexpected reply of %d values", len(reply))
	}
	var f [reserveHead - 4]int64
	for i := range f {
		f[i] = asInt(reply[2+i])
	}
	m := migrationOf(asInt(reply[0]), f[:])
	b := ReserveResult{Now: msTime(asInt(reply[0])), NextDue: m.NextDue, NextExpiry: m.NextExpiry, clock: m.Now}
	b.limited = asInt(reply[reserveHead-2]) == 1
	if b.open = msTime(asInt(reply[reserveHead-1])); !b.open.IsZero() {
		b.openQueue = queue
	}
	until := msTime(asInt(reply[1]))
	if len(reply) > reserveHead {
		b.Jobs = make([]Reservation, 0, (len(reply)-reserveHead)/4)
	}
	jobToken := token
	if hold {
		jobToken = heldPrefix + token
	}
	for i := reserveHead; i < len(reply); i += 4 {
		id, _ := reply[i].(string)
		payload, _ := reply[i+3].(string)
		r := Reservation{
			Ref:        Ref{Queue: queue, ID: id, Token: jobToken},
			Attempts:   int(asInt(reply[i+1])),
			Payload:    []byte(payload),
			LeaseUntil: until,
		}
		if r.Attempts == 0 {
			// reserve.lua marks a malformed state entry so, with the entry
			// in place of the exceptions when it has it.
			entry, _ := reply[i+2].(string)
			r.Err = &MalformedStateError{Queue: queue, ID: id, Entry: entry}
			r.Token = token
		} else {
			r.Exceptions = int(asInt(reply[i+2]))
		}
		b.Jobs = append(b.Jobs, r)
	}
	return b, nil
}

// Migrate moves due delayed jobs and expired reservations of queue back
// to ready: at most MigrateLimit of each per call.
func (br *Broker) Migrate(ctx context.Context, queue string) (Migration, error) {
	e := br.e
	if err := validateQueueOrPartition(queue); err != nil {
		return Migration{}, err
	}
	if m, ok, err := e.migratePartitioned(ctx, queue); ok {
		return m, err
	}
	cmd := e.store.RunOne(ctx, e.migrateCall(queue))
	m, err := parseMigration(cmd)
	if err != nil {
		return m, fmt.Errorf("migrate %q: %w", queue, err)
	}
	return m, nil
}

// Reserve migrates due jobs of queue, then takes up to n ready jobs under
// a lease, in one round trip. Each reservation gets a fresh random token.
// A paused queue yields no jobs. A job whose state entry in Redis is
// malformed is taken with the others, with Reservation.Err set: fail it
// rather than run it.
func (br *Broker) Reserve(ctx context.Context, queue string, n int, lease time.Duration) (ReserveResult, error) {
	return br.e.reserve(ctx, queue, n, lease, false)
}

// reserve is Broker.Reserve; hold reserves the jobs held: their attempts
// are not counted, and their tokens start with "h", until the worker
// starts each (Engine.start). The worker holds what it prefetches.
func (e *Engine) reserve(ctx context.Context, queue string, n int, lease time.Duration, hold bool) (ReserveResult, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return ReserveResult{}, err
	}
	if b, ok, err := e.reservePartitioned(ctx, queue, n, lease, hold); ok {
		return b, err
	}
	if n < 1 {
		return ReserveResult{}, fmt.Errorf("%w: reserve %d jobs: n must be at least 1", ErrInvalid, n)
	}
	if lease < time.Millisecond {
		return ReserveResult{}, fmt.Errorf("%w: reserve with lease %v: lease must be at least 1ms", ErrInvalid, lease)
	}
	rc, token := e.reserveCall(queue, n, lease, hold)
	b, err := parseReserve(queue, token, hold, e.store.RunOne(ctx, rc))
	if err != nil {
		return ReserveResult{}, fmt.Errorf("reserve from %q: %w", queue, err)
	}
	e.flow.note(queue, b.limited)
	return b, nil
}

// Wait blocks until a job may be ready on one of queues, or timeout
// passes, and returns the queue whose doorbell rang, or "" on timeout. A
// push, a release, a migration, a resume or a new earliest delayed job
// rings a queue's doorbell; waiting is a BLPOP on the doorbells, not
// polling, and a wake-up consumes the doorbell.
//
// Redis checks blocking timeouts only hz times a second (10 by default),
// so a timeout may end up to 100ms late; the worker uses its own timer
// for waits that must end on time. A cancelled ctx does not interrupt the
// BLPOP: keep timeouts short.
func (br *Broker) Wait(ctx context.Context, queues []string, timeout time.Duration) (string, error) {
	e := br.e
	return e.wait(ctx, queues, timeout, "")
}

// Fail moves reserved jobs into the failed store, then trims the store to
// FailedMaxCount and FailedMaxAge. Stale refs are reported as in Ack.
func (br *Broker) Fail(ctx context.Context, failures ...Failure) error {
	e := br.e
	byQueue := map[string][]Failure{}
	var order []string
	for _, f := range failures {
		if _, ok := byQueue[f.Queue]; !ok {
			order = append(order, f.Queue)
		}
		byQueue[f.Queue] = append(byQueue[f.Queue], f)
	}
	maxCount := max(e.cfg.FailedMaxCount, 0)
	maxAge := max(e.cfg.FailedMaxAge.Milliseconds(), 0)
	var calls []call
	var groups [][]Ref
	for _, q := range order {
		fs := byQueue[q]
		qk := e.keys.Queue(q)
		for len(fs) > 0 {
			n := min(300, len(fs))
			args := []any{maxCount, maxAge}
			refs := make([]Ref, n)
			for i, f := range fs[:n] {
				msg := "unknown error"
				if f.Err != nil {
					msg = f.Err.Error()
				}
				info, err := msgpack.Marshal(failedInfo{Name: f.Name, Error: msg, Attempts: f.Attempts, Token: f.Token})
				if err != nil {
					return fmt.Errorf("fail job %s: %w", f.ID, err)
				}
				args = append(args, f.ID, f.Token, info)
				refs[i] = f.Ref
			}
			keys := append([]string{qk.Reserved, qk.State, qk.Payloads, qk.Failed, qk.FailedPayloads, qk.FailedInfo, qk.Errors, qk.FailedErrors, qk.Progress}, e.groupKeys(q, true)...)
			calls = append(calls, call{Script: scriptFail, Keys: keys, Args: args})
			groups = append(groups, refs)
			fs = fs[n:]
		}
	}
	lost, err := applyRefs(ctx, e.store, calls, groups, 0, e.settleBells(groups))
	if err != nil {
		return fmt.Errorf("fail: %w", err)
	}
	return lostError(lost)
}

// Extend renews the leases of refs to lease from now (the heartbeat). It
// returns the refs whose lease was lost; those are not renewed. A job
// that was cancelled (Inspector.Cancel) is among the lost.
func (br *Broker) Extend(ctx context.Context, lease time.Duration, refs ...Ref) (lost []Ref, err error) {
	lost, cancelled, err := br.e.extend(ctx, lease, refs...)
	return append(lost, cancelled...), err
}

// extend is Extend, returning the refs of cancelled jobs apart from the
// other lost ones.
func (e *Engine) extend(ctx context.Context, lease time.Duration, refs ...Ref) (lost, cancelled []Ref, err error) {
	calls, groups := pairCalls(refs, 500, func(q string, args []any) call {
		qk := e.keys.Queue(q)
		return call{Script: scriptExtend, Keys: []string{qk.Reserved, qk.State, qk.Failed}, Args: append([]any{lease.Milliseconds()}, args...)}
	})
	if len(calls) == 0 {
		return nil, nil, nil
	}
	cmds, err := e.store.Run(ctx, calls)
	if err != nil {
		return nil, nil, fmt.Errorf("extend leases: %w", err)
	}
	for i, cmd := range cmds {
		st, err := cmd.Int64Slice()
		if err != nil {
			return nil, nil, fmt.Errorf("extend leases: %w", err)
		}
		for j, r := range groups[i] {
			switch {
			case 1+j < len(st) && st[1+j] == 1:
			case 1+j < len(st) && st[1+j] == 2:
				cancelled = append(cancelled, r)
			default:
				lost = append(lost, r)
			}
		}
	}
	return lost, cancelled, nil
}

// Ack deletes finished jobs. A ref whose lease was lost is left alone and
// reported as a *LeaseLostError (errors.Is ErrLeaseLost); the others are
// still deleted.
func (br *Broker) Ack(ctx context.Context, refs ...Ref) error {
	e := br.e
	lost, err := e.ack(ctx, refs...)
	if err != nil {
		return err
	}
	return lostError(lost)
}

// Release puts reserved jobs back on their queue. Their attempt counts are
// kept, unless opts.Deferral gives back the attempt each one's start
// counted. Stale refs are reported as in Ack.
func (br *Broker) Release(ctx context.Context, opts ReleaseOpts, refs ...Ref) error {
	return br.e.release(ctx, opts, nil, refs...)
}

// release is Release; a cause that is not nil is recorded as the
// released attempts' error (Errors, AttemptError).
func (e *Engine) release(ctx context.Context, opts ReleaseOpts, cause error, refs ...Ref) error {
	exc := "0"
	switch {
	case opts.Exception && opts.Deferral:
		return fmt.Errorf("release: %w: ReleaseOpts.Deferral cannot be set with Exception: a deferral is no exception", ErrInvalid)
	case opts.Exception:
		exc = "1"
	case opts.Deferral:
		exc = "d" // release.lua
	}
	calls, groups := pairCalls(refs, 1000, func(q string, args []any) call {
		qk := e.keys.Queue(q)
		gk := e.groupKeys(q, false)
		if cause != nil || gk != nil {
			// The group keys come after the errors hash; "" records no error.
			msg := ""
			if cause != nil {
				msg = attemptErrorArg(cause)
			}
			return call{Script: scriptRelease, Keys: append([]string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Notify, qk.Errors}, gk...),
				Args: append([]any{delayMillis(opts.Delay), exc, msg}, args...)}
		}
		return call{Script: scriptRelease, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Notify}, Args: append([]any{delayMillis(opts.Delay), exc}, args...)}
	})
	lost, err := applyRefs(ctx, e.store, calls, groups, 0, e.settleBells(groups))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return lostError(lost)
}
