package runtime

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jobgen/jobgen/internal/send"
	"github.com/redis/go-redis/v9"
)

// Sizes counts the jobs of one queue by state.
type Sizes struct {
	Ready    int64
	Delayed  int64
	Reserved int64
	Failed   int64
}

// Total is every job not yet finished: ready, delayed and reserved.
func (s Sizes) Total() int64 { return s.Ready + s.Delayed + s.Reserved }

// Sizes returns how many jobs of queue are in each state, counted in one
// script call, so the four counts are one snapshot. It only reads, so it
// works when Redis is past maxmemory.
func (i *Inspector) Sizes(ctx context.Context, queue string) (Sizes, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return Sizes{}, err
	}
	if s, ok, err := e.sizesPartitioned(ctx, queue); ok {
		return s, err
	}
	qk := e.keys.Queue(queue)
	v, err := call{Script: scriptSizes, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.Failed}, Args: nil}.Run(ctx, e.rdb).Int64Slice()
	if err == nil && len(v) != 4 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return Sizes{}, fmt.Errorf("sizes of %q: %w", queue, err)
	}
	return Sizes{Ready: v[0], Delayed: v[1], Reserved: v[2], Failed: v[3]}, nil
}

// ClearQueue deletes every ready, delayed and reserved job of queue and returns
// how many there were. Failed jobs and the paused flag are kept. Workers
// holding a cleared job get ErrLeaseLost when they ack it.
func (i *Inspector) ClearQueue(ctx context.Context, queue string) (int64, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return 0, err
	}
	if n, ok, err := e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return pe.inspector().ClearQueue(ctx, p) }); ok {
		return n, err
	}
	qk := e.keys.Queue(queue)
	n, err := call{Script: scriptClear, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.Payloads, qk.State, qk.Notify}, Args: nil}.Run(
		ctx, e.rdb).
		Int64()
	if err != nil {
		return 0, fmt.Errorf("clear %q: %w", queue, err)
	}
	return n, nil
}

// Queues lists, sorted, every queue that has been pushed to under this
// engine's prefix.
func (i *Inspector) Queues(ctx context.Context) ([]string, error) {
	e := i.e
	qs, err := e.rdb.SMembers(ctx, e.keys.Queues()).Result()
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	slices.Sort(qs)
	return qs, nil
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

// wait is Wait that, if id is not "", also ends, returning "", when wake
// is called with the same queues and id: a stopping worker ends its own
// wait, and only its own, at once.
func (e *Engine) wait(ctx context.Context, queues []string, timeout time.Duration, id string) (string, error) {
	if len(queues) == 0 || timeout <= 0 {
		return "", nil
	}
	queues = e.waitKeys(ctx, queues)
	byKey := make(map[string]string, len(queues))
	keys := make([]string, len(queues))
	for i, q := range queues {
		keys[i] = e.keys.Queue(q).Notify
		byKey[keys[i]] = q
	}
	if cc, ok := e.rdb.(*redis.ClusterClient); ok && len(keys) > 1 {
		// A multi-key BLPOP must stay in one slot; each queue has its own.
		// These BLPOPs end when ctx does (CLIENT UNBLOCK).
		return send.WaitCluster(ctx, cc, keys, byKey, timeout)
	}
	if id != "" {
		keys = append(keys, e.keys.Wake(queues[0], id)) // not in byKey: it returns ""
	}
	var reply []string
	var err error
	if timeout < time.Second {
		// go-redis's BLPop rounds timeouts under a second up to one second.
		args := make([]any, 0, len(keys)+2)
		args = append(args, "BLPOP")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, fmt.Sprintf("%.3f", timeout.Seconds()))
		reply, err = e.rdb.Do(ctx, args...).StringSlice()
	} else {
		reply, err = e.rdb.BLPop(ctx, timeout.Truncate(time.Second), keys...).Result()
	}
	switch {
	case err == redis.Nil:
		return "", nil
	case err != nil:
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("wait on %v: %w", queues, err)
	case len(reply) != 2:
		return "", fmt.Errorf("wait on %v: unexpected reply %v", queues, reply)
	}
	return byKey[reply[0]], nil
}

// wake ends the wait of id on queues under way, or the next one if it
// starts within a second.
func (e *Engine) wake(ctx context.Context, queues []string, id string) error {
	k := e.keys.Wake(e.waitKeys(ctx, queues)[0], id)
	_, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, k, "1")
		p.PExpire(ctx, k, time.Second)
		return nil
	})
	return err
}

// ring rings queue's doorbell, which holds at most one element.
func (e *Engine) ring(ctx context.Context, queue string) error {
	return send.Ring(ctx, e.rdb, e.keys.Queue(queue).Notify)
}
