package runtime

import (
	"context"
	"time"
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

// QueueState is a queue's sizes and whether it is paused.
type QueueState struct {
	Sizes
	Paused bool
	// Grouped are the ready jobs that wait in fair groups for their
	// group's turn (counted in Ready too).
	Grouped int64
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
	wake := ""
	if id != "" {
		wake = e.keys.Wake(queues[0], id) // not in byKey: it returns ""
	}
	return e.store.Wait(ctx, keys, byKey, wake, timeout)
}

// wake ends the wait of id on queues under way, or the next one if it
// starts within a second.
func (e *Engine) wake(ctx context.Context, queues []string, id string) error {
	k := e.keys.Wake(e.waitKeys(ctx, queues)[0], id)
	return e.store.Wake(ctx, k, time.Second)
}

// ring rings queue's doorbell, which holds at most one element.
func (e *Engine) ring(ctx context.Context, queue string) error {
	return e.store.Ring(ctx, e.keys.Queue(queue).Notify)
}
