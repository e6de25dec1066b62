package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// heldPrefix starts the token of a held reservation (reserve.lua).
const heldPrefix = jobrdb.HeldPrefix

// held reports whether r is held: reserved, and not started yet.
func (r Ref) held() bool { return strings.HasPrefix(r.Token, heldPrefix) }

// reserveArgs is the reserve of up to n jobs of queue under lease, with
// a fresh token.
func (e *Engine) reserveArgs(queue string, n int, lease time.Duration, hold bool) jobrdb.Reserve {
	return jobrdb.Reserve{Queue: queue, N: n, Lease: lease.Milliseconds(), Token: newToken(), Hold: hold,
		Calls: e.callsKey(queue), RetryWindow: e.retryWindow(), MigrateLimit: e.cfg.MigrateLimit}
}

// reserveResult reads the jobs r reserved from its queue; held jobs come
// under the held token, but for malformed ones.
func (e *Engine) reserveResult(r jobrdb.Reserve, got jobrdb.Reserved) ReserveResult {
	queue := r.Queue
	b := ReserveResult{Now: got.Now, NextDue: got.Migrated.NextDue, NextExpiry: got.Migrated.NextExpiry, clock: got.Migrated.Now, limited: got.Limited}
	if b.open = got.Open; !b.open.IsZero() {
		b.openQueue = queue
	}
	if got.Len() > 0 {
		b.Jobs = make([]Reservation, 0, got.Len())
	}
	jobToken := r.Token
	if r.Hold {
		jobToken = heldPrefix + r.Token
	}
	for i := range got.Len() {
		j := got.Job(i)
		res := Reservation{
			Ref:        Ref{Queue: queue, ID: j.ID, Token: jobToken},
			Attempts:   j.Attempts,
			Exceptions: j.Exceptions,
			Payload:    j.Payload,
			LeaseUntil: got.Until,
		}
		if j.Malformed {
			res.Err = &MalformedStateError{Queue: queue, ID: j.ID, Entry: j.Entry}
			res.Token = r.Token
		}
		b.Jobs = append(b.Jobs, res)
	}
	e.flow.Note(queue, b.limited)
	return b
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
	m, err := e.store.Migrate(ctx, queue, e.cfg.MigrateLimit)
	if err != nil {
		return Migration(m), fmt.Errorf("migrate %q: %w", queue, err)
	}
	return Migration(m), nil
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
	if e.lost.Pending() {
		e.recoverLost(ctx)
	}
	r := e.reserveArgs(queue, n, lease, hold)
	got, err := e.store.Reserve(ctx, r)
	if err != nil {
		e.noteLost(r, err)
		return ReserveResult{}, fmt.Errorf("reserve from %q: %w", queue, err)
	}
	return e.reserveResult(r, got), nil
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
// FailedMaxCount and FailedMaxAge, if set (counted and logged; see
// FailedStore.Trimmed). Stale refs are reported as in Ack.
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
	var fails []jobrdb.FailJobs
	var groups [][]Ref
	for _, q := range order {
		fs := byQueue[q]
		for len(fs) > 0 {
			n := min(300, len(fs))
			fj := jobrdb.FailJobs{Queue: q, Grouped: e.grouped.has(q)}
			refs := make([]Ref, n)
			for i, f := range fs[:n] {
				msg := "unknown error"
				if f.Err != nil {
					msg = f.Err.Error()
				}
				if err := fj.Add(f.ID, f.Token, jobrdb.FailedInfo{Name: f.Name, Error: msg, Attempts: f.Attempts, Token: f.Token}); err != nil {
					return err
				}
				refs[i] = f.Ref
			}
			fails = append(fails, fj)
			groups = append(groups, refs)
			fs = fs[n:]
		}
	}
	maxCount, maxAge := e.failedBounds()
	miss, trimmed, err := e.store.Fail(ctx, fails, maxCount, maxAge, e.settleBells(groups))
	if err != nil {
		return fmt.Errorf("fail: %w", err)
	}
	for i, n := range trimmed {
		e.logTrimmed(fails[i].Queue, n)
	}
	if e.cfg.FailedStore != nil {
		for _, q := range order {
			e.moveFailedLogged(ctx, q)
		}
	}
	return lostError(missed(groups, miss))
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
	jobs, groups := e.byQueue(refs, 500)
	lostAt, cancelledAt, err := e.store.Extend(ctx, jobs, lease.Milliseconds())
	if err != nil {
		return nil, nil, fmt.Errorf("extend leases: %w", err)
	}
	return missed(groups, lostAt), missed(groups, cancelledAt), nil
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
	if opts.Exception && opts.Deferral {
		return fmt.Errorf("release: %w: ReleaseOpts.Deferral cannot be set with Exception: a deferral is no exception", ErrInvalid)
	}
	r := jobrdb.Release{Delay: delayMillis(opts.Delay), Exception: opts.Exception, Deferral: opts.Deferral}
	if cause != nil {
		r.Error = attemptErrorArg(cause)
	}
	jobs, groups := e.byQueue(refs, 1000)
	miss, err := e.store.Release(ctx, jobs, r, e.settleBells(groups))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return lostError(missed(groups, miss))
}
