package send

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"slices"
	"sync"
)

// Group commit of pushes.
//
// A push script call costs Redis, and the client, far more per call
// than per job: each call is a round trip, with its system calls and
// wake-ups on both sides. So the pushes of an engine whose jobs all go
// to one queue with one delay (every Push, Later and Dispatch) share
// calls when they come in together.
//
// A push that finds fewer than MaxFlights flights in flight goes out
// at once, alone, in its caller's goroutine: a caller pushing alone never
// waits. A push that finds that many in flight waits. When a flight
// lands, the first push waiting flies the next one, with every push
// waiting then (up to Chunk jobs): one script call per queue and
// delay, in one pipeline. A flight's goroutine is always the goroutine of
// one of its pushes, so the engine starts no goroutines of its own.
//
// Several flights at once, rather than one, keep Redis busy while the
// client turns a flight around. Each flight is a script call, and each
// call records a nonce in Redis for RetryWindow, so more flights carry
// fewer jobs each and cost Redis and the client more time, and Redis
// more memory, per job. With 8 callers dispatching one job at a time
// (`bench/run.sh -phases enqueue`), two flights enqueued as fast as four
// on one 2-core machine; on another they were as fast or faster in six
// alternated runs of seven, and cost Redis and the client together about
// a fifth less CPU per job, with 269 rather than 274 bytes of Redis
// memory per waiting job. One flight used the least CPU, but on the
// first machine it enqueued a quarter slower; eight were slower than
// four.
//
// A flight that carried several pushes answers them, then yields the
// processor once before the next flight leaves, so that the callers just
// answered, if they push again at once (a loop of Dispatch calls), can
// join it rather than go in the flight after it.
//
// Each push gets its own answer. A shared call that fails with an error
// reply from Redis (DUPLICATE, say) did nothing, so its pushes go again
// one call each and each gets the answer of its own call. That holds
// because push.lua and later.lua check everything that can fail before
// their first write: Redis keeps what a script wrote before an error,
// and a payload left behind would make the push sent again look like a
// retry of one that landed. Any other
// error (the connection broke, WAIT timed out) is every push's of that
// call: it may or may not have pushed them, as for a push sent alone.

// MaxFlights is the most flights of pushes in flight at once per
// Flights.
const MaxFlights = 2

// Chunk is the most jobs sent in one push call.
const Chunk = 500

// Group is the jobs of one push that go to one (physical) queue with one
// delay: one script call.
type Group struct {
	Queue string
	Delay int64 // ms; 0 pushes to the ready list
	// Width is the number of Args a job takes, the job ID first: 2 (ID,
	// encoded envelope) or 3 (and its fair group). 0 means 2.
	Width int
	Args  []any
	// Tags holds each job's tags, in the order of Args, for monitored
	// tags (rdb.Enqueue.Tags); nil when no job of the group has any. A
	// group with tags is sent on its own, not merged in a flight.
	Tags [][]string
}

// W is g's width, 2 when unset.
func (g *Group) W() int {
	if g.Width == 0 {
		return 2
	}
	return g.Width
}

// Jobs is the number of jobs in g.
func (g *Group) Jobs() int { return len(g.Args) / g.W() }

// Flights is the group commit of one engine's pushes. Its three funcs
// are set before the first Push.
type Flights struct {
	// Call returns the script call that pushes the jobs of g, whose
	// Args may be those of several groups of the same queue, delay and
	// width.
	Call func(g *Group) Call
	// Run sends calls as Pushed does.
	Run func(ctx context.Context, calls []Call) []error
	// Err is the error a push returns for its call's error.
	Err func(error) error

	mu      sync.Mutex
	flying  int
	waiting []*pushReq // only while MaxFlights fly
	closed  bool
	idle    chan struct{} // closed when flying drops to zero after close
}

// pushReq is one push: a group of jobs for one queue and delay.
type pushReq struct {
	*Group
	// done receives once: when err is set, or, if flight is set, when
	// this push's goroutine is to fly it.
	done chan struct{}
	err  error
	// flight is the flight this push leads: itself first, then the pushes
	// that waited with it.
	flight []*pushReq
	taken  bool // in a flight, so no longer withdrawn; guarded by mu
}

// Push pushes g, with other pushes if some are waiting, and returns its
// own outcome. A push whose ctx ends while it waits is withdrawn: it
// returns ctx's error, and nothing of it was sent. Once its flight has
// gone out, it waits for the answer, as a push sent alone waits for its
// reply.
func (f *Flights) Push(ctx context.Context, g *Group) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		return f.alone(ctx, g)
	case f.flying < MaxFlights:
		f.flying++
		f.mu.Unlock()
		defer f.land(nil)
		return f.alone(ctx, g)
	}
	r := &pushReq{Group: g, done: make(chan struct{}, 1)}
	f.waiting = append(f.waiting, r)
	f.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		f.mu.Lock()
		if !r.taken {
			f.waiting = slices.DeleteFunc(f.waiting, func(w *pushReq) bool { return w == r })
			f.mu.Unlock()
			return fmt.Errorf("push: %w", ctx.Err())
		}
		f.mu.Unlock()
		<-r.done
	}
	if r.flight != nil {
		f.fly(context.WithoutCancel(ctx), r.flight)
	}
	return r.err
}

// Waiting returns how many pushes wait for a flight.
func (f *Flights) Waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiting)
}

// errNoAnswer is the answer of the pushes of a flight whose sending
// panicked (in a go-redis hook, say): the panic goes on in the flight's
// goroutine, and the engine goes on pushing.
var errNoAnswer = errors.New("push: no answer: sending the calls panicked")

// fly sends batch, whose first push is the caller's, then lands.
func (f *Flights) fly(ctx context.Context, batch []*pushReq) {
	for _, r := range batch {
		r.err = errNoAnswer
	}
	defer f.land(batch[1:])
	f.send(ctx, batch)
}

// land ends a flight: it answers others, the pushes of the flight other
// than the caller's, whose errors are set. Then it hands its place to
// the pushes waiting, if any: the first of them flies them.
func (f *Flights) land(others []*pushReq) {
	for _, r := range others {
		r.done <- struct{}{}
	}
	if len(others) > 0 {
		goruntime.Gosched()
	}
	f.mu.Lock()
	next := f.leader()
	if next == nil {
		f.flying--
		if f.flying == 0 && f.idle != nil {
			close(f.idle)
			f.idle = nil
		}
	}
	f.mu.Unlock()
	if next != nil {
		next.done <- struct{}{}
	}
}

// leader takes the oldest push waiting, if any, to fly the next flight,
// and the pushes waiting behind it that the flight has room for: so two
// flights that land together do not share out the pushes waiting. The
// caller signals it once it has let go of mu.
func (f *Flights) leader() *pushReq {
	if len(f.waiting) == 0 {
		return nil
	}
	r := f.waiting[0]
	r.taken = true
	f.waiting = slices.Delete(f.waiting, 0, 1)
	r.flight = append([]*pushReq{r}, f.take(Chunk-r.Jobs())...)
	return r
}

// take removes the oldest waiting pushes, up to room jobs, for a
// flight. The caller holds mu.
func (f *Flights) take(room int) []*pushReq {
	n := 0
	for n < len(f.waiting) && f.waiting[n].Jobs() <= room {
		room -= f.waiting[n].Jobs()
		f.waiting[n].taken = true
		n++
	}
	if n == 0 {
		return nil
	}
	batch := slices.Clone(f.waiting[:n])
	rest := copy(f.waiting, f.waiting[n:])
	clear(f.waiting[rest:])
	f.waiting = f.waiting[:rest]
	return batch
}

// Close waits until no flight is in flight, and so none waits; pushes
// after it are sent alone.
func (f *Flights) Close() {
	f.mu.Lock()
	f.closed = true
	if f.flying == 0 {
		f.mu.Unlock()
		return
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	<-idle
}

// alone pushes g in a call of its own.
func (f *Flights) alone(ctx context.Context, g *Group) error {
	if err := FirstErr(f.Run(ctx, []Call{f.Call(g)})); err != nil {
		return f.Err(err)
	}
	return nil
}

// sendFlight pushes batch with one script call per queue and delay, in
// one pipeline, and sets the error of each push. A job ID that two
// pushes of one call share starts a new call for the later push, which
// then finds the first one's job, as two pushes sent one after the
// other would.
func (f *Flights) send(ctx context.Context, batch []*pushReq) {
	if len(batch) == 1 {
		batch[0].err = f.alone(ctx, batch[0].Group)
		return
	}
	type groupKey struct {
		queue string
		delay int64
		width int
	}
	var plans []*flightCall
	open := make(map[groupKey]*flightCall) // the call taking pushes, per queue and delay
	for _, r := range batch {
		k := groupKey{r.Queue, r.Delay, r.W()}
		p := open[k]
		if p == nil || p.hasAny(r) {
			p = &flightCall{queue: r.Queue, delay: r.Delay, width: r.W(), ids: make(map[any]struct{})}
			plans = append(plans, p)
			open[k] = p
		}
		p.add(r)
	}
	calls := make([]Call, len(plans))
	members := make([][]*pushReq, len(plans))
	for i, p := range plans {
		g := p.rs[0].Group
		if len(p.rs) > 1 {
			args := make([]any, 0, p.width*p.jobs)
			for _, r := range p.rs {
				args = append(args, r.Args...)
			}
			g = &Group{Queue: p.queue, Delay: p.delay, Width: p.width, Args: args}
		}
		calls[i] = f.Call(g)
		members[i] = p.rs
	}
	errs := f.Run(ctx, calls)
	var again []*pushReq
	for i, rs := range members {
		var err error
		if errs != nil {
			err = errs[i]
		}
		if err != nil && len(rs) > 1 && IsReplyError(err) {
			again = append(again, rs...)
			continue
		}
		if err != nil {
			err = f.Err(err)
		}
		for _, r := range rs {
			r.err = err
		}
	}
	if len(again) == 0 {
		return
	}
	// A call Redis refused did nothing: each of its pushes goes again in
	// a call of its own, for an answer of its own.
	calls = calls[:0]
	for _, r := range again {
		calls = append(calls, f.Call(r.Group))
	}
	errs = f.Run(ctx, calls)
	for i, r := range again {
		r.err = nil
		if errs != nil && errs[i] != nil {
			r.err = f.Err(errs[i])
		}
	}
}

// flightCall is the plan of one script call of a flight: pushes of one
// queue and delay, no two of which share a job ID.
type flightCall struct {
	queue string
	delay int64
	width int
	rs    []*pushReq
	jobs  int
	ids   map[any]struct{} // the job IDs of rs
}

func (p *flightCall) add(r *pushReq) {
	p.rs = append(p.rs, r)
	p.jobs += r.Jobs()
	for j := 0; j < len(r.Args); j += p.width {
		p.ids[r.Args[j]] = struct{}{}
	}
}

// hasAny reports whether a job ID of r is in p already.
func (p *flightCall) hasAny(r *pushReq) bool {
	for j := 0; j < len(r.Args); j += p.width {
		if _, ok := p.ids[r.Args[j]]; ok {
			return true
		}
	}
	return false
}
