package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/send"
)

// Outgoing is one job to push: its envelope and, optionally, a delay.
type Outgoing struct {
	Envelope *Envelope
	Delay    time.Duration
}

// Push adds a job to the back of its queue.
func (e *Engine) Push(ctx context.Context, env *Envelope) error {
	return e.PushMany(ctx, []Outgoing{{Envelope: env}})
}

// Later adds a job to its queue, to become ready after delay.
func (e *Engine) Later(ctx context.Context, env *Envelope, delay time.Duration) error {
	return e.PushMany(ctx, []Outgoing{{Envelope: env, Delay: delay}})
}

// pushChunk is the most jobs sent in one script call.
const pushChunk = send.Chunk

// pushGroup is the jobs of one push that go to one (physical) queue with
// one delay: one script call.
type pushGroup = send.Group

// pushCall is the script call that pushes pairs (job ID, encoded
// envelope) to queue with delay ms. Each call records a nonce of its own,
// so that a retry of it by the Redis client is not pushed again
// (push.lua, later.lua).
func (e *Engine) pushCall(queue string, delay int64, pairs []any) call {
	qk := e.keys.Queue(queue)
	record := e.callsKey(queue)
	args := make([]any, 0, len(pairs)+3)
	if delay > 0 {
		args = append(args, delay)
	}
	args = append(args, e.retryWindow(), newNonce())
	args = append(args, pairs...)
	if delay > 0 {
		return call{Script: scriptLater, Keys: []string{qk.Delayed, qk.Payloads, qk.Notify, record}, Args: args}
	}
	return call{Script: scriptPush, Keys: []string{qk.Ready, qk.Payloads, qk.Notify, record}, Args: args}
}

// PushMany pushes many jobs, to any queues, in one pipeline of script
// calls of up to 500 jobs each. Each envelope gets an ID and dispatch time
// if it has none. Every job is checked against the payload cap before
// anything is sent. Jobs of one queue and delay are pushed atomically per
// chunk; the call as a whole is not atomic.
//
// A job ID that exists already in its queue, or that jobs names twice,
// is pushed once if the payloads are the same (a push made again), and
// refused with ErrIDTaken if not; the chunk holding the second one
// then pushes nothing.
//
// A push whose jobs all go to one queue with one delay (every Push, Later
// and Dispatch) may be sent together with other such pushes on the same
// engine; see Engine for what that changes.
//
// The push runs inside the engine's dispatch middleware (UseDispatch).
func (e *Engine) PushMany(ctx context.Context, jobs []Outgoing) error {
	if len(jobs) == 0 {
		return nil
	}
	if !e.hasDispatchMiddleware() { // the common case: no DispatchCall, no closure
		return e.pushMany(ctx, jobs)
	}
	return e.pushThrough(ctx, &DispatchCall{Kind: pushKind(jobs), Jobs: jobs}, func(ctx context.Context) error {
		return e.pushMany(ctx, jobs)
	})
}

func (e *Engine) pushMany(ctx context.Context, jobs []Outgoing) error {
	var g pushGroups
	var grouped []groupedPush
	now := time.Now().UnixMilli()
	for _, j := range jobs {
		q, payload, err := e.stored(j, now)
		if err != nil {
			return err
		}
		if cg := j.Envelope.groupArg(); cg != "" {
			grouped = append(grouped, groupedPush{queue: q, delay: delayMillis(j.Delay), id: j.Envelope.ID, payload: payload, group: cg})
			continue
		}
		g.add(q, delayMillis(j.Delay), j.Envelope.ID, payload, len(jobs))
	}
	if len(g.groups) > 0 {
		if err := e.send(ctx, g.groups); err != nil {
			return err
		}
	}
	if len(grouped) > 0 {
		if err := e.sendGrouped(ctx, grouped); err != nil {
			return err
		}
	}
	if !e.events.empty() {
		for _, j := range jobs {
			e.events.emit(Event{Kind: JobQueued, Queue: j.Envelope.Queue, Name: j.Envelope.Name, ID: j.Envelope.ID, Delay: j.Delay})
		}
	}
	return nil
}

// stored checks j and returns the queue (or partition) it goes to and
// its stored payload, giving it an ID and a dispatch time of now (unix
// ms) if it has none.
func (e *Engine) stored(j Outgoing, now int64) (queue string, payload []byte, err error) {
	env := j.Envelope
	if err := ValidateQueueName(env.Queue); err != nil {
		return "", nil, fmt.Errorf("push %s: %w", env.Name, err)
	}
	if j.Delay < 0 {
		return "", nil, fmt.Errorf("push %s: %w: negative delay %v", env.Name, ErrInvalid, j.Delay)
	}
	if env.ID == "" {
		env.ID = newIDAt(now)
	}
	if env.DispatchedAt == 0 {
		env.DispatchedAt = now
	}
	queue = e.pushQueue(env.Queue)
	payload, err = env.EncodeStored(queue)
	if err != nil {
		return "", nil, err
	}
	if len(payload) > e.cfg.MaxPayload {
		return "", nil, &PayloadTooLargeError{Name: env.Name, Size: len(payload), Cap: e.cfg.MaxPayload}
	}
	return queue, payload, nil
}

// pushGroups sorts the jobs of a PushMany into push calls, one per queue
// and delay, of at most pushChunk jobs each.
type pushGroups struct {
	groups []*pushGroup
	index  map[pushGroupKey]*pushGroup // once jobs go to several groups
}

type pushGroupKey struct {
	queue string
	delay int64
}

// add adds one job to the group of its queue and delay; total is the
// number of jobs of the push, to size the first group.
func (p *pushGroups) add(queue string, delay int64, id string, payload []byte, total int) {
	k := pushGroupKey{queue, delay}
	var g *pushGroup
	switch last := len(p.groups) - 1; {
	case p.index != nil:
		g = p.index[k]
	case last < 0:
	case p.groups[last].Queue == queue && p.groups[last].Delay == delay:
		g = p.groups[last]
	default:
		p.index = make(map[pushGroupKey]*pushGroup, len(p.groups)+1)
		for _, o := range p.groups {
			p.index[pushGroupKey{o.Queue, o.Delay}] = o
		}
	}
	if g == nil || g.Jobs() >= pushChunk {
		g = &pushGroup{Queue: queue, Delay: delay}
		if len(p.groups) == 0 {
			g.Args = make([]any, 0, 2*min(total, pushChunk))
		}
		if p.index != nil {
			p.index[k] = g
		}
		p.groups = append(p.groups, g)
	}
	g.Args = append(g.Args, id, payload)
}

// send pushes the groups: one group through the group commit of
// concurrent pushes (send.Flights), several in one pipeline.
func (e *Engine) send(ctx context.Context, groups []*pushGroup) error {
	for _, g := range groups {
		if err := e.remember(ctx, g.Queue); err != nil {
			return err
		}
	}
	if len(groups) == 1 {
		return e.flights.Push(ctx, groups[0])
	}
	calls := make([]call, len(groups))
	for i, g := range groups {
		calls[i] = e.pushCall(g.Queue, g.Delay, g.Args)
	}
	if err := send.FirstErr(e.runPush(ctx, calls)); err != nil {
		return pushError(err)
	}
	return nil
}

// pushError wraps the error of a push call; a DUPLICATE reply becomes
// ErrIDTaken.
func pushError(err error) error {
	if redis.HasErrorPrefix(err, "DUPLICATE") {
		return fmt.Errorf("push: %w: %s", ErrIDTaken, strings.TrimPrefix(err.Error(), "DUPLICATE "))
	}
	return fmt.Errorf("push: %w", err)
}

// remember adds queue to the set of known queues, once per engine.
func (e *Engine) remember(ctx context.Context, queue string) error {
	queue = e.logicalQueue(queue)
	if _, ok := e.known.Load(queue); ok {
		return nil
	}
	if err := e.rdb.SAdd(ctx, e.keys.Queues(), queue).Err(); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	e.known.Store(queue, struct{}{})
	return nil
}
