package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Events and listeners: Laravel's event(new OrderShipped(...)) with
// queued listeners (CallQueuedListener). An event is any value; a
// listener is a type with a wire name and job options (generated from
// `//job:listen=Event`), whose handler takes the event. Firing an event
// runs its synchronous listeners in place and pushes one job per queued
// listener, all of them in one script call.

// Listener is a listener type: ListenerName is the wire name its jobs
// are routed by, ListenerOptions the options each of its jobs carries.
// Generated code implements it for `//job:listen=` types.
type Listener interface {
	ListenerName() string
	ListenerOptions() JobOptions
}

// ListenerJob is the job that runs listener L for one event E: Laravel's
// CallQueuedListener. It carries the event; its name and options are
// L's, so each listener of an event has its own tries, backoff, timeout
// and failed-store entry, and one that fails for good affects no other.
// jobtest.AssertDispatched[runtime.ListenerJob[L, E]] finds the job a
// fired event queued for L.
type ListenerJob[L Listener, E any] struct {
	Event E
}

// JobName returns L's wire name.
func (ListenerJob[L, E]) JobName() string { var l L; return l.ListenerName() }

// JobOptions returns L's options.
func (ListenerJob[L, E]) JobOptions() JobOptions { var l L; return l.ListenerOptions() }

// EncodeJob encodes the job, its event included, with msgpack.
func (j ListenerJob[L, E]) EncodeJob() ([]byte, error) { return Encode(j) }

// RegisterListener routes the jobs of listener L to handle, which gets
// the event. Generated Register functions call it for every listener,
// queued or synchronous (Fire runs a synchronous one through the
// router).
func RegisterListener[L Listener, E any](r *Router, handle func(ctx context.Context, event E) error, opts ...RouteOption[ListenerJob[L, E]]) {
	var l L
	Register(r, l.ListenerName(), func(ctx context.Context, j ListenerJob[L, E]) error {
		return handle(ctx, j.Event)
	}, opts...)
}

// ListenerCall is one listener of a fired event, as Fire takes it:
// QueuedListener or SyncListener.
type ListenerCall struct {
	job  Job
	sync bool
}

// QueuedListener is listener L of event, to be queued as a ListenerJob.
func QueuedListener[L Listener, E any](event E) ListenerCall {
	return ListenerCall{job: ListenerJob[L, E]{Event: event}}
}

// SyncListener is listener L of event, to run inside Fire, through the
// router of WithRouter or SetDefaultRouter.
func SyncListener[L Listener, E any](event E) ListenerCall {
	return ListenerCall{job: ListenerJob[L, E]{Event: event}, sync: true}
}

// PendingEvent is a fired event with its listeners, as an
// EventDispatcher receives it.
type PendingEvent struct {
	event  any
	sync   []Job
	queued []*PendingDispatch
}

// Event returns the fired event.
func (p *PendingEvent) Event() any { return p.event }

// SyncListeners returns the jobs of the synchronous listeners, in order.
func (p *PendingEvent) SyncListeners() []Job { return p.sync }

// Queued returns the dispatches of the queued listeners, in order. They
// share one queue, connection and delay (Fire checks).
func (p *PendingEvent) Queued() []*PendingDispatch { return p.queued }

// RunSync runs the synchronous listeners in order through the router of
// WithRouter or SetDefaultRouter, and returns the first error, after
// which none runs.
func (p *PendingEvent) RunSync(ctx context.Context) error {
	if len(p.sync) == 0 {
		return nil
	}
	r, err := routerFor(ctx)
	if err != nil {
		return fmt.Errorf("fire %T: synchronous listeners: %w", p.event, err)
	}
	for _, j := range p.sync {
		if err := r.RunSync(ctx, j); err != nil {
			return fmt.Errorf("fire %T: listener %s: %w", p.event, j.JobName(), err)
		}
	}
	return nil
}

// EventDispatcher fires events: *Engine runs the synchronous listeners
// and pushes the queued ones' jobs in one call; jobtest's fake records
// the event and the jobs.
type EventDispatcher interface {
	DispatchEvent(ctx context.Context, p *PendingEvent) (ids []string, err error)
}

// maxListeners is the most queued listeners one event may have: their
// jobs go in one script call.
const maxListeners = pushChunk

// Fire fires event: Laravel's event(). Its synchronous listeners run
// first, in order, and the first error stops Fire before anything is
// queued. Then one job per queued listener is pushed, all in one script
// call, so either every one is queued or none is. That is why the
// queued listeners of one event must share one queue, connection and
// delay (the generator checks; Fire returns ErrInvalid otherwise), none
// may be unique, and there are at most 500 of them. On a partitioned
// queue all of them go to one partition.
//
// The dispatcher is found as for Dispatch (WithDispatcher, else the
// listeners' connection, else the default) and must be an
// EventDispatcher. An event with synchronous listeners only needs no
// dispatcher.
func Fire(ctx context.Context, event any, listeners ...ListenerCall) error {
	p := &PendingEvent{event: event}
	for _, l := range listeners {
		if l.sync {
			p.sync = append(p.sync, l.job)
			continue
		}
		pd := NewPendingDispatch(l.job)
		if err := checkListener(p, pd); err != nil {
			return err
		}
		p.queued = append(p.queued, pd)
	}
	connection := ""
	if len(p.queued) > 0 {
		connection = p.queued[0].Connection()
	}
	d, err := DispatcherFor(ctx, connection)
	if err != nil {
		if errors.Is(err, ErrNoDispatcher) && len(p.queued) == 0 {
			return p.RunSync(ctx)
		}
		return fmt.Errorf("fire %T: %w", event, err)
	}
	ed, ok := d.(EventDispatcher)
	if !ok {
		return fmt.Errorf("%w: fire %T: dispatcher %T is not a runtime.EventDispatcher", ErrInvalid, event, d)
	}
	_, err = ed.DispatchEvent(ctx, p)
	return err
}

// checkListener checks that pd can go in the same script call as the
// listeners of p before it.
func checkListener(p *PendingEvent, pd *PendingDispatch) error {
	name := pd.Job().JobName()
	if pd.JobOptions().UniqueFor > 0 {
		return fmt.Errorf("%w: fire %T: listener %s is unique (UniqueFor); a queued listener may not be, since its lock would be a second call", ErrInvalid, p.event, name)
	}
	if len(p.queued) >= maxListeners {
		return fmt.Errorf("%w: fire %T: more than %d queued listeners", ErrInvalid, p.event, maxListeners)
	}
	if len(p.queued) == 0 {
		return nil
	}
	first := p.queued[0]
	if pd.Queue() != first.Queue() || pd.Connection() != first.Connection() || pd.DelayDuration() != first.DelayDuration() {
		return fmt.Errorf("%w: fire %T: listener %s goes to queue %q, connection %q, delay %v, but %s to queue %q, connection %q, delay %v; the queued listeners of one event are pushed in one atomic call, so they must share all three",
			ErrInvalid, p.event, name, pd.Queue(), pd.Connection(), pd.DelayDuration(),
			first.Job().JobName(), first.Queue(), first.Connection(), first.DelayDuration())
	}
	return nil
}

// DispatchEvent fires p: *Engine is an EventDispatcher. It runs the
// synchronous listeners, then pushes the queued listeners' jobs in one
// script call (the push script checks everything before it writes), and
// returns their IDs.
func (e *Engine) DispatchEvent(ctx context.Context, p *PendingEvent) ([]string, error) {
	if err := p.RunSync(ctx); err != nil {
		return nil, err
	}
	if len(p.queued) == 0 {
		return nil, nil
	}
	first := p.queued[0]
	queue := e.partitionFor(first.Queue(), "") // one partition for all
	if err := ValidateQueueName(first.Queue()); err != nil {
		return nil, fmt.Errorf("fire %T: %w", p.event, err)
	}
	delay := first.DelayDuration()
	envs := make([]*Envelope, len(p.queued))
	out := &DispatchCall{Kind: DispatchKindEvent, Jobs: make([]Outgoing, len(p.queued))}
	for i, pd := range p.queued {
		env, err := pd.envelope(e.seal)
		if err != nil {
			return nil, fmt.Errorf("fire %T: %w", p.event, err)
		}
		envs[i] = env
		out.Jobs[i] = Outgoing{Envelope: env, Delay: delay}
	}
	// The dispatch middleware (a trace context, say) may set headers:
	// the payloads are encoded inside it.
	err := e.pushThrough(ctx, out, func(ctx context.Context) error {
		var g pushGroups
		now := time.Now().UnixMilli()
		for _, env := range envs {
			payload, err := e.encodeStored(env, queue, now)
			if err != nil {
				return err
			}
			g.add(queue, delayMillis(delay), env.ID, payload, env.groupArg(), env.Tags, len(envs))
		}
		return e.send(ctx, g.groups)
	})
	if err != nil {
		return nil, fmt.Errorf("fire %T: %w", p.event, err)
	}
	ids := make([]string, len(envs))
	for i, env := range envs {
		ids[i] = env.ID
		if !e.events.empty() {
			e.events.emit(Event{Kind: JobQueued, Queue: env.Queue, Name: env.Name, ID: env.ID, Delay: delay})
		}
	}
	return ids, nil
}
