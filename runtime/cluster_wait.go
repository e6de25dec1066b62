package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitCluster is Wait on a Redis Cluster for several queues. A multi-key
// BLPOP must stay in one slot, and each queue has a slot of its own, so
// every doorbell gets a BLPOP of its own, on a connection of its own to
// the doorbell's master. The first BLPOP to return unblocks the others
// (CLIENT UNBLOCK, which ends a BLPOP as if it timed out, taking nothing),
// and waitCluster returns once all of them have. A doorbell that another
// BLPOP took in the meantime is rung again, so no wake-up is lost.
//
// keys are the doorbells, in the order of queues; byKey maps them back.
func (e *Engine) waitCluster(ctx context.Context, cc *redis.ClusterClient, keys []string, byKey map[string]string, timeout time.Duration) (string, error) {
	// A doorbell that rang already wins at once, earliest queue first.
	popped := make([]*redis.StringCmd, len(keys))
	_, _ = cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			popped[i] = p.LPop(ctx, k)
		}
		return nil
	})
	var rang []string
	for i, cmd := range popped {
		switch err := cmd.Err(); {
		case err == nil:
			rang = append(rang, keys[i])
		case err != redis.Nil:
			return "", fmt.Errorf("wait on %v: %w", queueNames(keys, byKey), err)
		}
	}
	if len(rang) > 0 {
		e.ringAgain(ctx, byKey, rang[1:])
		return byKey[rang[0]], nil
	}

	type result struct {
		i   int
		key string // the doorbell taken, or ""
		err error
	}
	var (
		mu      sync.Mutex
		stopped bool
		ids     = make([]int64, len(keys)) // CLIENT ID of each BLPOP's connection once known
		nodes   = make([]*redis.Client, len(keys))
		results = make(chan result, len(keys))
	)
	for i, k := range keys {
		go func() {
			res := result{i: i}
			defer func() { results <- res }()
			node, err := cc.MasterForKey(ctx, k)
			if err != nil {
				res.err = err
				return
			}
			conn := node.Conn()
			defer conn.Close()
			id, err := conn.ClientID(ctx).Result()
			if err != nil {
				res.err = err
				return
			}
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			ids[i], nodes[i] = id, node
			mu.Unlock()
			res.key, res.err = blpopOne(ctx, conn, k, timeout)
		}()
	}

	var won string
	var firstErr error
	finished := make([]bool, len(keys))
	stop := func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
	collect := func(r result) {
		finished[r.i] = true
		switch {
		case r.err != nil:
			if firstErr == nil {
				firstErr = r.err
			}
			stop()
		case r.key != "" && won == "":
			won = r.key
			stop()
		case r.key != "":
			rang = append(rang, r.key)
		}
	}
	remaining := len(keys)
	done := ctx.Done()
	for remaining > 0 && !stopped {
		select {
		case r := <-results:
			collect(r)
			remaining--
		case <-done:
			stop()
			done = nil
		}
	}
	// Unblock the BLPOPs still running until each has returned. A BLPOP
	// may not have started yet when its CLIENT UNBLOCK arrives, so the
	// unblocks repeat until every result is in.
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for remaining > 0 {
		mu.Lock()
		for i := range keys {
			if !finished[i] && ids[i] != 0 {
				_ = nodes[i].ClientUnblock(context.WithoutCancel(ctx), ids[i]).Err()
			}
		}
		mu.Unlock()
		select {
		case r := <-results:
			collect(r)
			remaining--
		case <-tick.C:
		}
	}
	e.ringAgain(ctx, byKey, rang)

	switch {
	case won != "":
		return byKey[won], nil
	case firstErr != nil:
		if _, moved := redis.IsMovedError(firstErr); moved {
			cc.ReloadState(ctx)
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("wait on %v: %w", queueNames(keys, byKey), firstErr)
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	return "", nil
}

// blpopOne blocks on one doorbell and returns it if it rang, or "" on
// timeout.
func blpopOne(ctx context.Context, conn *redis.Conn, key string, timeout time.Duration) (string, error) {
	var reply []string
	var err error
	if timeout < time.Second {
		// go-redis's BLPop rounds timeouts under a second up to one second.
		reply, err = conn.Do(ctx, "BLPOP", key, fmt.Sprintf("%.3f", timeout.Seconds())).StringSlice()
	} else {
		reply, err = conn.BLPop(ctx, timeout.Truncate(time.Second), key).Result()
	}
	switch {
	case err == redis.Nil:
		return "", nil
	case err != nil:
		return "", err
	case len(reply) != 2:
		return "", fmt.Errorf("unexpected BLPOP reply %v", reply)
	}
	return reply[0], nil
}

// ringAgain rings the doorbells a wait took but did not use, so another
// waiter gets them.
func (e *Engine) ringAgain(ctx context.Context, byKey map[string]string, keys []string) {
	for _, k := range keys {
		_ = e.ring(context.WithoutCancel(ctx), byKey[k])
	}
}

func queueNames(keys []string, byKey map[string]string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}
