package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/internal/flowlimit"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Flow limits: a queue's concurrency limit and rate, enforced where jobs
// are reserved (docs/flow-control.md).
//
// Both live in the queue's settings hash (keyspace QueueKeys.Settings),
// in its hash tag, and the reserve script reads them with one HMGET
// (lua/lib/flow_limit.lua); a queue without limits costs that read and
// nothing else. The concurrency limit caps the queue's reserved set,
// which holds every job of the queue under lease: running, or held by a
// worker's Prefetch. A worker killed holds its slots until its leases
// run out; the reserve that moves the expired jobs back to ready counts
// them free. A job the rate holds back is never reserved, so it uses no
// attempt.
//
// A partitioned queue (EngineConfig.Partitions) has its limits split
// over its partitions, each partition's share in its own settings hash:
// the shares add up to the limit, so the limit holds over the whole
// queue with each reserve still one script call in one slot, on a Redis
// Cluster too. The price is that a partition's share is its own: with
// jobs spread unevenly, a partition with no work leaves its share idle
// while another's jobs wait. (A semaphore in one slot would share the
// whole limit, at the price of a second round trip per reserve and a
// lease of its own to renew.) Dispatch spreads jobs over the partitions
// round robin, so the shares are used evenly as a rule. A limit must
// give every partition a share of at least one: at least the number of
// partitions.

// QueueLimit is a queue's flow limits, as EngineConfig.QueueLimits
// sets them.
type QueueLimit struct {
	// Concurrency is the most jobs of the queue under lease at once,
	// across every worker and process: running, or held by a worker's
	// Prefetch. 0 for no limit.
	Concurrency int
	// Rate is the most jobs of the queue reserved in each window of Per,
	// a window starting with the first job reserved after the last one
	// ended (Laravel's Redis::throttle counts so): across a window's end,
	// up to twice Rate may start within one Per. 0 for no rate.
	Rate int
	// Per is the window of Rate, in whole milliseconds from 1ms to 24h.
	Per time.Duration
}

// QueueLimits is a queue's flow limits and what they did.
type QueueLimits struct {
	QueueLimit
	// Running is the number of the queue's jobs under lease now: running
	// or held by a Prefetch (Sizes.Reserved), which Concurrency caps.
	Running int64
	// HeldByLimit counts the reserves that Concurrency held back while
	// jobs of the queue were ready; HeldByRate those that Rate held back.
	// They only grow, and count calls, not jobs: a waiting worker tries
	// again as a slot frees, or when the window ends.
	HeldByLimit int64
	HeldByRate  int64
}

// maxRatePer bounds QueueLimit.Per.
const maxRatePer = 24 * time.Hour

// validate checks l for queue, whose partitions number parts.
func (l QueueLimit) validate(queue string, parts int) error {
	switch {
	case l.Concurrency < 0:
		return fmt.Errorf("%w: concurrency limit of queue %q (%d) must not be negative", ErrInvalid, queue, l.Concurrency)
	case l.Rate < 0:
		return fmt.Errorf("%w: rate of queue %q (%d) must not be negative", ErrInvalid, queue, l.Rate)
	case l.Rate > 0 && (l.Per < time.Millisecond || l.Per > maxRatePer || l.Per%time.Millisecond != 0):
		return fmt.Errorf("%w: rate window of queue %q (%v) must be whole milliseconds from 1ms to 24h", ErrInvalid, queue, l.Per)
	case l.Concurrency > 0 && l.Concurrency < parts:
		return fmt.Errorf("%w: concurrency limit of queue %q (%d) must be at least its %d partitions, each taking a share", ErrInvalid, queue, l.Concurrency, parts)
	case l.Rate > 0 && l.Rate < parts:
		return fmt.Errorf("%w: rate of queue %q (%d) must be at least its %d partitions, each taking a share", ErrInvalid, queue, l.Rate, parts)
	}
	return nil
}

func (c *EngineConfig) validateQueueLimits() error {
	for q, l := range c.QueueLimits {
		if err := ValidateQueueName(q); err != nil {
			return fmt.Errorf("EngineConfig.QueueLimits: %w", err)
		}
		if err := l.validate(q, max(c.Partitions[q], 1)); err != nil {
			return fmt.Errorf("EngineConfig.QueueLimits[%q]: %w", q, err)
		}
	}
	return nil
}

// SetQueueLimit sets the most jobs of queue under lease at once, across
// every worker and process; 0 removes the limit. It applies from the
// next reserve: jobs running beyond a lowered limit finish, and no more
// start until the queue is below it. A raised or removed limit wakes a
// waiting worker. On a partitioned queue, n is split over the partitions
// (flow_limit.go), so it must be at least their number.
func (i *Inspector) SetQueueLimit(ctx context.Context, queue string, n int) error {
	return i.e.setFlow(ctx, queue, QueueLimit{Concurrency: n}, true, false)
}

// SetQueueRate sets the most jobs of queue reserved in each window of
// per (see QueueLimit.Rate); n 0 removes the rate. A job held back is
// not reserved and uses no attempt. On a partitioned queue, n is split
// over the partitions, so it must be at least their number.
func (i *Inspector) SetQueueRate(ctx context.Context, queue string, n int, per time.Duration) error {
	return i.e.setFlow(ctx, queue, QueueLimit{Rate: n, Per: per}, false, true)
}

// applyQueueLimits sets EngineConfig.QueueLimits (at a worker's start).
func (e *Engine) applyQueueLimits(ctx context.Context) error {
	for q, l := range e.cfg.QueueLimits {
		if err := e.setFlow(ctx, q, l, true, true); err != nil {
			return err
		}
	}
	return nil
}

// setFlow writes l's concurrency limit (if limit) and rate (if rate) to
// the settings of queue's partitions, each its share, and rings their
// doorbells so that waiting workers see the change.
func (e *Engine) setFlow(ctx context.Context, queue string, l QueueLimit, limit, rate bool) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	names := e.queueNames(queue)
	if err := l.validate(queue, len(names)); err != nil {
		return err
	}
	// A queue with a limit is listed (Inspector.Queues, queue:monitor)
	// before its first dispatch, so that a limit set on a misspelt name
	// shows.
	if (limit && l.Concurrency != 0) || (rate && l.Rate != 0) {
		if err := e.remember(ctx, queue); err != nil {
			return err
		}
	}
	for i, name := range names {
		qk := e.keys.Queue(name)
		f := jobrdb.QueueFlow{SetLimit: limit, SetRate: rate}
		if limit && l.Concurrency != 0 {
			f.Limit = flowlimit.Share(l.Concurrency, len(names), i)
		}
		if rate && l.Rate != 0 {
			f.Rate, f.PerMs = flowlimit.Share(l.Rate, len(names), i), l.Per.Milliseconds()
		}
		err := e.store.SetQueueFlow(ctx, qk.Settings, qk.Notify, f)
		if err != nil {
			return fmt.Errorf("set the limits of queue %q: %w", name, err)
		}
	}
	return nil
}

// QueueLimits reads queue's flow limits, how many of its jobs are under
// lease, and how often each limit held a reserve back; summed over the
// partitions of a partitioned queue.
func (i *Inspector) QueueLimits(ctx context.Context, queue string) (QueueLimits, error) {
	m, err := i.QueueLimitsOf(ctx, []string{queue})
	return m[queue], err
}

// QueueLimitsOf is QueueLimits for several queues, in one round trip.
func (i *Inspector) QueueLimitsOf(ctx context.Context, queues []string) (map[string]QueueLimits, error) {
	e := i.e
	var queueOf, names, settings, reserved []string
	for _, q := range queues {
		if err := ValidateQueueName(q); err != nil {
			return nil, err
		}
		for _, name := range e.queueNames(q) {
			qk := e.keys.Queue(name)
			queueOf, names = append(queueOf, q), append(names, name)
			settings, reserved = append(settings, qk.Settings), append(reserved, qk.Reserved)
		}
	}
	reads := e.store.QueueFlows(ctx, settings, reserved)
	out := make(map[string]QueueLimits, len(queues))
	for k, r := range reads {
		if r.Err != nil {
			return nil, fmt.Errorf("read the limits of queue %q: %w", names[k], r.Err)
		}
		l := out[queueOf[k]]
		l.Concurrency += int(r.Limit)
		l.Rate += int(r.Rate)
		l.Per = max(l.Per, time.Duration(r.PerMs)*time.Millisecond)
		l.HeldByLimit += r.HeldByLimit
		l.HeldByRate += r.HeldByRate
		l.Running += r.Running
		out[queueOf[k]] = l
	}
	return out, nil
}

// settleBells are the doorbells to ring with a settle of groups (refs by
// queue): those of the queues with a concurrency limit, once each.
func (e *Engine) settleBells(groups [][]Ref) []string {
	var bells []string
	var last string
	for _, g := range groups {
		if len(g) == 0 || g[0].Queue == last {
			continue
		}
		last = g[0].Queue
		if e.flow.Has(last) {
			bells = append(bells, e.keys.Queue(last).Notify)
		}
	}
	return bells
}
