package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/internal/send"
)

// Outgoing is one job to push: its envelope and, optionally, a delay (one
// of zero or less makes it ready at once).
type Outgoing struct {
	Envelope *Envelope
	Delay    time.Duration
	// At, if not zero, is when the job becomes ready, in place of Delay:
	// PushMany reads it against this process's clock, DispatchTx's relay
	// against the database's. A time already past makes it ready at once.
	At time.Time
}

// delayOf returns how long o waits from now: until At if it is set, else
// Delay; 0 for a time already past.
func (o Outgoing) delayOf() time.Duration {
	if !o.At.IsZero() {
		return max(time.Until(o.At), 0)
	}
	return max(o.Delay, 0)
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
// one delay and width: one script call.
type pushGroup = send.Group

// enqueueCall is the one builder of a script call that puts new jobs
// into a queue: s's own keys and arguments (lead), then step's, on the
// keys of queue (physical). A step that holds grouped jobs marks the
// queue grouped, so that this engine's settles of its jobs pass the
// group keys (group.go).
func (e *Engine) enqueueCall(s *script, queue string, step *jobrdb.Enqueue, keys []string, args ...any) call {
	step.Queue = e.keys.Queue(queue)
	if step.Grouped() {
		e.grouped.add(queue)
	}
	return call{Script: s, Keys: step.Keys(keys...), Args: step.Args(args...)}
}

// pushCall is the script call that pushes g's jobs (push.lua). Each call
// records a nonce of its own, so that a retry of it by the Redis client
// is not pushed again.
func (e *Engine) pushCall(g *pushGroup) call {
	step := jobrdb.Enqueue{Width: g.W(), Delay: g.Delay, Jobs: g.Args, Tags: g.Tags, TagBound: MaxTagJobs}
	return e.enqueueCall(scriptPush, g.Queue, &step, []string{e.callsKey(g.Queue)}, e.retryWindow(), newNonce())
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
	now := time.Now().UnixMilli()
	for _, j := range jobs {
		delay := j.delayOf()
		q, payload, cg, err := e.stored(j.Envelope, delay, now, "")
		if err != nil {
			return err
		}
		g.add(q, delayMillis(delay), j.Envelope.ID, payload, cg, j.Envelope.Tags, len(jobs))
	}
	if err := e.send(ctx, g.groups); err != nil {
		return err
	}
	if !e.events.empty() {
		for _, j := range jobs {
			e.events.emit(Event{Kind: JobQueued, Queue: j.Envelope.Queue, Name: j.Envelope.Name, ID: j.Envelope.ID, Delay: j.delayOf()})
		}
	}
	return nil
}

// stored is what every way into a queue does with a new job before its
// script call: it checks the job (its queue's name, its delay, its size
// stored), seals its body if it is marked Encrypted and not sealed yet,
// gives it an ID and a dispatch time of now (unix ms) if it has
// none, and returns the queue or partition it goes to, its stored
// payload and its fair group ("<limit>:<group>", "" for none; the
// scripts take it through lib/enqueue.lua). by picks the partition of a
// partitioned queue (partitionFor): "" takes them in turn.
func (e *Engine) stored(env *Envelope, delay time.Duration, now int64, by string) (queue string, payload []byte, group string, err error) {
	if err := ValidateQueueName(env.Queue); err != nil {
		return "", nil, "", fmt.Errorf("push %s: %w", env.Name, err)
	}
	if env.ID == "" { // before the seal, which binds the body to it
		env.ID = newIDAt(now)
	}
	if err := e.sealPending(env); err != nil { // crypt.go
		return "", nil, "", err
	}
	queue = e.partitionFor(env.Queue, by)
	if delay > 0 && env.Headers[DueHeader] == "" {
		// its due time, for the wait it is counted (readyAt)
		h := make(map[string]string, len(env.Headers)+1)
		for k, v := range env.Headers {
			h[k] = v
		}
		at := env.DispatchedAt
		if at == 0 {
			at = now
		}
		h[DueHeader] = strconv.FormatInt(at+delay.Milliseconds(), 10)
		env.Headers = h
	}
	payload, err = e.encodeStored(env, queue, now)
	if err != nil {
		return "", nil, "", err
	}
	return queue, payload, env.groupArg(), nil
}

// encodeStored encodes env as stored in queue, giving it an ID and a
// dispatch time of now if it has none, and checks its size against the
// payload cap.
func (e *Engine) encodeStored(env *Envelope, queue string, now int64) ([]byte, error) {
	if env.ID == "" {
		env.ID = newIDAt(now)
	}
	if env.DispatchedAt == 0 {
		env.DispatchedAt = now
	}
	payload, err := env.EncodeStored(queue)
	if err != nil {
		return nil, err
	}
	if len(payload) > e.cfg.MaxPayload {
		return nil, &PayloadTooLargeError{Name: env.Name, Size: len(payload), Cap: e.cfg.MaxPayload}
	}
	return payload, nil
}

// pushGroups sorts the jobs of a push into push calls, one per queue,
// delay and width, of at most pushChunk jobs each.
type pushGroups struct {
	groups []*pushGroup
	index  map[pushGroupKey]*pushGroup // once jobs go to several groups
}

type pushGroupKey struct {
	queue string
	delay int64
	width int
}

// add adds one job to the group of its queue, delay and width (grouped
// jobs, cg not "", are three arguments wide), with its tags; total is
// the number of jobs of the push, to size the first group.
func (p *pushGroups) add(queue string, delay int64, id string, payload []byte, cg string, tags []string, total int) {
	w := jobrdb.WidthPlain
	if cg != "" {
		w = jobrdb.WidthGrouped
	}
	k := pushGroupKey{queue, delay, w}
	var g *pushGroup
	switch last := len(p.groups) - 1; {
	case p.index != nil:
		g = p.index[k]
	case last < 0:
	case p.groups[last].Queue == queue && p.groups[last].Delay == delay && p.groups[last].W() == w:
		g = p.groups[last]
	default:
		p.index = make(map[pushGroupKey]*pushGroup, len(p.groups)+1)
		for _, o := range p.groups {
			p.index[pushGroupKey{o.Queue, o.Delay, o.W()}] = o
		}
	}
	if g == nil || g.Jobs() >= pushChunk {
		g = &pushGroup{Queue: queue, Delay: delay, Width: w}
		if len(p.groups) == 0 {
			g.Args = make([]any, 0, w*min(total, pushChunk))
		}
		if p.index != nil {
			p.index[k] = g
		}
		p.groups = append(p.groups, g)
	}
	tagJob(g, tags)
	if cg != "" {
		g.Args = append(g.Args, id, payload, cg)
	} else {
		g.Args = append(g.Args, id, payload)
	}
}

// MaxTagJobs is how many jobs of a queue each monitored tag keeps, the
// newest (keyspace QueueKeys.TagJobs).
const MaxTagJobs = 1000

// oneJobTags is the Enqueue.Tags of a step of one job with tags: nil
// when it has none.
func oneJobTags(tags []string) [][]string {
	if len(tags) == 0 {
		return nil
	}
	return [][]string{tags}
}

// tagJob records tags, those of the job about to be added to g (its
// index is g.Jobs()), so that its push records it under the tags
// monitored on its queue. g.Tags stays nil while no job of g has tags.
func tagJob(g *pushGroup, tags []string) {
	if len(tags) == 0 {
		if g.Tags != nil {
			g.Tags = append(g.Tags, nil)
		}
		return
	}
	for len(g.Tags) < g.Jobs() {
		g.Tags = append(g.Tags, nil)
	}
	g.Tags = append(g.Tags, tags)
}

// send pushes the groups: one group through the group commit of
// concurrent pushes (send.Flights), several, or one with tags, in one
// pipeline.
func (e *Engine) send(ctx context.Context, groups []*pushGroup) error {
	if len(groups) == 0 {
		return nil
	}
	for _, g := range groups {
		if err := e.remember(ctx, g.Queue); err != nil {
			return err
		}
	}
	if len(groups) == 1 && groups[0].Tags == nil {
		return e.flights.Push(ctx, groups[0])
	}
	calls := make([]call, len(groups))
	for i, g := range groups {
		calls[i] = e.pushCall(g)
	}
	if err := send.FirstErr(e.runPush(ctx, calls)); err != nil {
		return pushError(err)
	}
	return nil
}

// pushError wraps the error of a push call; a DUPLICATE reply becomes
// ErrIDTaken.
func pushError(err error) error {
	if jobrdb.HasErrorPrefix(err, "DUPLICATE") {
		return fmt.Errorf("push: %w: %s", ErrIDTaken, jobrdb.ErrorText(err, "DUPLICATE"))
	}
	return fmt.Errorf("push: %w", err)
}

// remember adds queue to the set of known queues, once per engine; a
// queue new to the set gets a copy of the monitored tags.
func (e *Engine) remember(ctx context.Context, queue string) error {
	queue = e.logicalQueue(queue)
	if _, ok := e.known.Load(queue); ok {
		return nil
	}
	added, err := e.store.AddQueue(ctx, queue)
	if err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	if added {
		// A queue new to the known set takes the monitored tags
		// (Inspector.MonitorTag writes them to the queues it knows).
		if _, err := e.store.CopyTags(ctx, e.queueNames(queue)); err != nil {
			return fmt.Errorf("register queue %q: monitored tags: %w", queue, err)
		}
	}
	e.known.Store(queue, struct{}{})
	return nil
}
