package laravel

import (
	"context"
	"fmt"
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
// first is dispatched with the rest as its own $chained. The Go worker
// continues a chain only if it knows every link's class (Mapper), and
// refuses, with ErrUnmappable, one with catch callbacks (PHP closures it
// cannot call when a link fails) or a connection of its own (it can push
// only to its own).
func (m *Mapper) chainOf(command string) (*chain, error) {
	v, err := phpserial.Unmarshal([]byte(command))
	if err != nil {
		return nil, nil // DecodeCommand reports it
	}
	o, ok := v.(*phpserial.Object)
	if !ok {
		return nil, nil
	}
	raw, _ := o.Get("chained")
	list, _ := raw.(*phpserial.Array)
	if list == nil || len(list.Entries) == 0 {
		return nil, nil
	}
	if cb, _ := o.Get("chainCatchCallbacks"); !isEmpty(cb) {
		return nil, fmt.Errorf("%w: %s carries a chain with catch callbacks, PHP closures the Go worker cannot call", ErrUnmappable, o.Class)
	}
	if conn, _ := o.Get("chainConnection"); conn != nil {
		return nil, fmt.Errorf("%w: %s carries a chain on connection %v, which the Go worker cannot push to", ErrUnmappable, o.Class, conn)
	}
	c := &chain{}
	c.chainQueue, _ = o.Get("chainQueue")
	for i, e := range list.Entries {
		s, ok := e.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s: link %d of its chain is not a serialized job", ErrUnmappable, o.Class, i+1)
		}
		link, err := phpserial.Unmarshal([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: link %d of its chain: %w", ErrUnmappable, o.Class, i+1, err)
		}
		lo, ok := link.(*phpserial.Object)
		if !ok {
			return nil, fmt.Errorf("%w: %s: link %d of its chain is not an object", ErrUnmappable, o.Class, i+1)
		}
		m.mu.RLock()
		mp := m.byClass[lo.Class]
		m.mu.RUnlock()
		if mp == nil || mp.str {
			return nil, fmt.Errorf("%w: %s: link %d of its chain is %s, which no Go type is mapped to", ErrUnmappable, o.Class, i+1, lo.Class)
		}
		if conn, _ := lo.Get("connection"); conn != nil {
			return nil, fmt.Errorf("%w: %s: link %d of its chain goes to connection %v, which the Go worker cannot push to", ErrUnmappable, o.Class, i+1, conn)
		}
		if i == 0 {
			c.next = lo
		}
		c.links = append(c.links, s)
	}
	return c, nil
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
