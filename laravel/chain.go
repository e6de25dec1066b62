package laravel

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/laravel/phpserial"
)

// chain is what a job's $chained holds, read before the job runs.
type chain struct {
	// links are serialize() of the jobs still to run, in order.
	links []string
	// The chain's settings, copied to each next job as Laravel's
	// Queueable::dispatchNextJobInChain does.
	chainQueue any
	next       *phpserial.Object
}

// chainOf reads the chain of a queued object's command. Laravel's
// Queueable keeps the jobs to run after this one in $chained, each as
// serialize() of the job; when the job succeeds (or deletes itself) the
// first is dispatched with the rest as its own $chained.
//
// It refuses, with an error matching ErrUnmappable, a job that only
// Laravel's worker can finish (see finishable): the worker leaves such a
// job on its queue for PHP's workers, or fails it under FailUnmapped.
func (m *Mapper) chainOf(command string, batchID string) (*chain, error) {
	v, err := phpserial.Unmarshal([]byte(command))
	if err != nil {
		return nil, nil // DecodeCommand reports it
	}
	o, ok := v.(*phpserial.Object)
	if !ok {
		return nil, nil
	}
	if err := finishable(o, batchID); err != nil {
		return nil, err
	}
	raw, _ := o.Get("chained")
	list, _ := raw.(*phpserial.Array)
	if list == nil || len(list.Entries) == 0 {
		return nil, nil
	}
	if conn, _ := o.Get("chainConnection"); conn != nil {
		return nil, phpOnly(kindChain, o.Class, "heads a chain on connection %v, which the Go worker cannot push to", conn)
	}
	c := &chain{}
	c.chainQueue, _ = o.Get("chainQueue")
	for i, e := range list.Entries {
		s, ok := e.Value.(string)
		if !ok {
			return nil, phpOnly(kindChain, o.Class, "heads a chain whose link %d after it is not a serialized job", i+1)
		}
		link, err := phpserial.Unmarshal([]byte(s))
		if err != nil {
			return nil, phpOnly(kindChain, o.Class, "heads a chain whose link %d after it does not unserialize in Go: %v", i+1, err)
		}
		lo, ok := link.(*phpserial.Object)
		if !ok {
			return nil, phpOnly(kindChain, o.Class, "heads a chain whose link %d after it is not an object", i+1)
		}
		m.mu.RLock()
		mp := m.byClass[lo.Class]
		m.mu.RUnlock()
		if mp == nil || mp.str {
			return nil, phpOnly(kindChain, o.Class, "heads a chain whose link %d after it is %s, which no Go type is mapped to", i+1, lo.Class)
		}
		if conn, _ := lo.Get("connection"); conn != nil {
			return nil, phpOnly(kindChain, o.Class, "heads a chain whose link %d after it goes to connection %v, which the Go worker cannot push to", i+1, conn)
		}
		if i == 0 {
			c.next = lo
		}
		c.links = append(c.links, s)
	}
	return c, nil
}

// finishable refuses a job whose end only Laravel's worker can handle:
//
//   - A link of a chain with catch callbacks (Bus::chain(...)->catch()).
//     Laravel copies the callbacks to every link, and calls them in
//     CallQueuedHandler::failed when a link fails for good, whichever
//     link and however it fails (its tries or retryUntil used up,
//     maxExceptions, fail(), a timeout with failOnTimeout). They are PHP
//     closures, and any attempt may end in such a failure, so a Go worker
//     runs no link of such a chain, the last one included.
//   - A job of a batch (Bus::batch, $batchId). Laravel's worker records
//     each outcome in the batch's job_batches row and fires its then,
//     catch and finally callbacks, PHP closures, when the counts say so.
//     12.x names the batch in the payload's data.batchId (batchID); every
//     version in the job's public $batchId (Batchable).
func finishable(o *phpserial.Object, batchID string) error {
	if cb, _ := o.Get("chainCatchCallbacks"); !isEmpty(cb) {
		n := 1
		if a, ok := cb.(*phpserial.Array); ok {
			n = len(a.Entries)
		}
		return phpOnly(kindCatch, o.Class, "is a link of a chain with %d catch callback(s), PHP closures that only Laravel's worker can call when a link fails", n)
	}
	if batchID == "" {
		batchID = batchIDOf(o)
	}
	if batchID != "" {
		return phpOnly(kindBatch, o.Class, "is a job of batch %s, whose job_batches row and then, catch and finally callbacks only Laravel's worker updates and calls", batchID)
	}
	return nil
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case *phpserial.Array:
		return len(v.Entries) == 0
	}
	return false
}

// dispatchNext pushes the chain's next job onto q, as Laravel's
// dispatchNextJobInChain does: the rest of the chain as its $chained, its
// own queue or else the chain's, the chain's settings copied.
func (c *chain) dispatchNext(ctx context.Context, q *Queue) error {
	next := c.next
	rest := &phpserial.Array{Entries: []phpserial.Entry{}}
	for i, s := range c.links[1:] {
		rest.Entries = append(rest.Entries, phpserial.Entry{Key: int64(i), Value: s})
	}
	queue, _ := next.Get("queue")
	if queue == nil {
		queue = c.chainQueue
	}
	set(next, "chained", rest)
	set(next, "queue", queue)
	set(next, "chainConnection", nil)
	set(next, "chainQueue", c.chainQueue)
	set(next, "chainCatchCallbacks", nil)
	cmd, err := phpserial.Marshal(next)
	if err != nil {
		return err
	}
	data, err := phpJSON(CommandData{CommandName: next.Class, Command: string(cmd)})
	if err != nil {
		return err
	}
	p := Payload{UUID: uuid4(), DisplayName: next.Class, Job: CallQueuedHandler, Data: data, ID: randomID()}
	p.MaxTries = propInt(next, "tries")
	p.MaxExceptions = propInt(next, "maxExceptions")
	p.Timeout = propInt(next, "timeout")
	p.RetryUntil = propInt(next, "retryUntil")
	if b, _ := next.Get("failOnTimeout"); b == true {
		p.FailOnTimeout = true
	}
	p.Backoff = propBackoff(next)
	payload, err := p.Encode()
	if err != nil {
		return err
	}
	name, _ := queue.(string)
	if name == "" {
		name = "default"
	}
	if d := propInt(next, "delay"); d != nil && *d > 0 {
		return q.Later(ctx, name, time.Duration(*d)*time.Second, payload)
	}
	return q.Push(ctx, name, payload)
}

// set sets property name of o, adding it as public if o has none.
func set(o *phpserial.Object, name string, v any) {
	for i := range o.Props {
		if o.Props[i].Name == name {
			o.Props[i].Value = v
			return
		}
	}
	o.Props = append(o.Props, phpserial.Prop{Name: name, Value: v})
}

func propInt(o *phpserial.Object, name string) *int64 {
	if v, ok := o.Get(name); ok {
		if n, ok := v.(int64); ok {
			return &n
		}
	}
	return nil
}

// propBackoff is Laravel's getJobBackoff for a $backoff property: a
// number, or an array of them, joined with commas.
func propBackoff(o *phpserial.Object) *string {
	v, _ := o.Get("backoff")
	switch v := v.(type) {
	case int64:
		s := strconv.FormatInt(v, 10)
		return &s
	case *phpserial.Array:
		parts := make([]string, 0, len(v.Entries))
		for _, e := range v.Entries {
			if n, ok := e.Value.(int64); ok {
				parts = append(parts, strconv.FormatInt(n, 10))
			}
		}
		s := strings.Join(parts, ",")
		return &s
	}
	return nil
}

// batchIDOf is the job's Batchable $batchId: a public property holding a
// string, as Laravel's Batchable trait declares it; "" if it has none.
func batchIDOf(o *phpserial.Object) string {
	for _, p := range o.Props {
		if p.Name == "batchId" && p.Visibility == phpserial.Public {
			s, _ := p.Value.(string)
			return s
		}
	}
	return ""
}
