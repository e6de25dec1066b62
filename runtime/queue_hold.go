package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// HoldQueue returns an error that holds the job's whole queue for d and
// puts the job back without using an attempt, for a handler that met a
// limit of a service every job of the queue calls (an HTTP 429, say):
//
//	if resp.StatusCode == http.StatusTooManyRequests {
//		return runtime.HoldQueue(retryAfter(resp), errors.New("rate limited by the API"))
//	}
//
// No worker, in any process, reserves a job of the queue until d has
// passed by the Redis clock; the job goes back ready, first in line for
// when the hold ends, as DeferRequest(0) would put it (its attempts are
// given back; its RetryUntil still holds). Jobs running in other
// workers finish. A hold already on that ends later stays: a hold is
// never shortened, except by Inspector.HoldQueue(ctx, queue, 0). A
// partitioned queue is held in every partition. cause is what the
// worker logs and what errors.Is finds in the returned error; d must be
// positive, else the attempt ends as though the handler had returned an
// error saying so. BullMQ's worker.rateLimit with RateLimitError is the
// same idea. Inspector.QueueHolds, queue:monitor, the dashboard and the
// Prometheus module show the hold and what is left of it.
func HoldQueue(d time.Duration, cause error) error {
	if cause == nil {
		cause = errors.New("held by its handler")
	}
	if d <= 0 {
		return fmt.Errorf("%w: HoldQueue(%v): the hold must be positive; the job counts this attempt as an exception: %w", ErrInvalid, d, cause)
	}
	return &releaseRequest{deferral: true, hold: d, cause: cause}
}

// AsHold reports whether err, or an error it wraps, is a HoldQueue
// request, and the hold it asks for. Such a request is also a
// DeferRequest (AsRelease, IsDeferral) with no delay.
func AsHold(err error) (d time.Duration, ok bool) {
	var r *releaseRequest
	if errors.As(err, &r) && r.hold > 0 {
		return r.hold, true
	}
	return 0, false
}

// holdQueue holds every partition of queue for d (0 ends the hold), and
// returns when the hold ends.
func (e *Engine) holdQueue(ctx context.Context, queue string, d time.Duration) (time.Time, error) {
	names := e.queueNames(queue)
	settings, notify := make([]string, len(names)), make([]string, len(names))
	for i, name := range names {
		qk := e.keys.Queue(name)
		settings[i], notify[i] = qk.Settings, qk.Notify
	}
	ms := d.Milliseconds()
	if d > 0 {
		ms = max(ms, 1)
	}
	until, err := e.store.HoldQueues(ctx, settings, notify, ms)
	if err != nil {
		return time.Time{}, fmt.Errorf("hold queue %q: %w", queue, err)
	}
	return until, nil
}

// HoldQueue holds queue for d from the Redis clock's now, as a handler's
// HoldQueue does, unless a longer hold is on; d of 0 ends the queue's
// hold at once and wakes its workers. It returns when the hold ends
// (zero once ended).
func (i *Inspector) HoldQueue(ctx context.Context, queue string, d time.Duration) (time.Time, error) {
	if err := ValidateQueueName(queue); err != nil {
		return time.Time{}, err
	}
	if d < 0 {
		return time.Time{}, fmt.Errorf("%w: hold queue %q for %v: the hold must not be negative (0 ends it)", ErrInvalid, queue, d)
	}
	return i.e.holdQueue(ctx, queue, d)
}

// QueueHolds returns the time left of each queue's hold (HoldQueue), by
// the Redis clock; a queue with no hold on is left out. One round trip
// for all of them. A queue may be named by one of its partitions
// (QueuePartitions), for that partition's hold alone.
func (i *Inspector) QueueHolds(ctx context.Context, queues []string) (map[string]time.Duration, error) {
	e := i.e
	var queueOf, settings []string
	for _, q := range queues {
		if err := validateQueueOrPartition(q); err != nil {
			return nil, err
		}
		for _, name := range e.queueNames(q) {
			queueOf, settings = append(queueOf, q), append(settings, e.keys.Queue(name).Settings)
		}
	}
	out := map[string]time.Duration{}
	if len(settings) == 0 {
		return out, nil
	}
	left, err := e.store.QueueHolds(ctx, settings)
	if err != nil {
		return nil, fmt.Errorf("read queue holds: %w", err)
	}
	for k, d := range left {
		if d > 0 {
			out[queueOf[k]] = max(out[queueOf[k]], d)
		}
	}
	return out, nil
}
