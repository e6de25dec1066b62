package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/send"
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
