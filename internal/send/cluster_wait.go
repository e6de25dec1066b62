package send

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// WaitCluster waits up to timeout on the doorbells of several queues of
// a Redis Cluster and returns the queue whose doorbell rang, or "" if
// none did. A multi-key BLPOP must stay in one slot, and each queue has a
// slot of its own, so every doorbell gets a BLPOP of its own, on a
// connection of its own to the doorbell's master. The first BLPOP to
// return unblocks the others (CLIENT UNBLOCK, which ends a BLPOP as if it
// timed out, taking nothing), and WaitCluster returns once all of them
// have. A doorbell that another BLPOP took in the meantime is rung again
// (Ring), so no wake-up is lost. The BLPOPs end when ctx does.
//
// keys are the doorbells, in the order of the queues; byKey maps them
// back to the queues' names.
func WaitCluster(ctx context.Context, cc *redis.ClusterClient, keys []string, byKey map[string]string, timeout time.Duration) (string, error) {
	// A doorbell that rang already wins at once, earliest queue first.
	rang, err := popRung(ctx, cc, keys)
	if err != nil {
		return "", fmt.Errorf("wait on %v: %w", queueNames(keys, byKey), err)
	}
	if len(rang) > 0 {
		ringAgain(ctx, cc, rang[1:])
		return byKey[rang[0]], nil
	}
	w := &clusterWait{
		ids:      make([]int64, len(keys)),
		nodes:    make([]*redis.Client, len(keys)),
		finished: make([]bool, len(keys)),
		results:  make(chan blpopResult, len(keys)),
	}
	for i, k := range keys {
		go w.blpop(ctx, cc, i, k, timeout)
	}
	w.collectAll(ctx, len(keys))
	ringAgain(ctx, cc, w.rang)

	switch {
	case w.won != "":
		return byKey[w.won], nil
	case w.firstErr != nil:
		if _, moved := redis.IsMovedError(w.firstErr); moved {
			cc.ReloadState(ctx)
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("wait on %v: %w", queueNames(keys, byKey), w.firstErr)
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	return "", nil
}

// popRung takes the doorbells of keys that rang already, in the order of
// keys.
func popRung(ctx context.Context, cc *redis.ClusterClient, keys []string) ([]string, error) {
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
			return nil, err
		}
	}
	return rang, nil
}

// blpopResult is how one BLPOP of a cluster wait ended.
type blpopResult struct {
	i   int
	key string // the doorbell taken, or ""
	err error
}

// clusterWait is the state of one WaitCluster: a BLPOP per doorbell, on
// a connection of that doorbell's master.
type clusterWait struct {
	mu      sync.Mutex
	stopped bool
	ids     []int64 // CLIENT ID of each BLPOP's connection once known
	nodes   []*redis.Client
	results chan blpopResult

	// Read and written by collectAll's goroutine only.
	finished []bool
	won      string   // the doorbell that ended the wait
	rang     []string // other doorbells taken, to ring again
	firstErr error
}

// blpop runs the BLPOP of doorbell i, key, unless the wait has stopped
// before its connection is known.
func (w *clusterWait) blpop(ctx context.Context, cc *redis.ClusterClient, i int, key string, timeout time.Duration) {
	res := blpopResult{i: i}
	defer func() { w.results <- res }()
	node, err := cc.MasterForKey(ctx, key)
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
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.ids[i], w.nodes[i] = id, node
	w.mu.Unlock()
	res.key, res.err = blpopOne(ctx, conn, key, timeout)
}

func (w *clusterWait) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

func (w *clusterWait) isStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

func (w *clusterWait) collect(r blpopResult) {
	w.finished[r.i] = true
	switch {
	case r.err != nil:
		if w.firstErr == nil {
			w.firstErr = r.err
		}
		w.stop()
	case r.key != "" && w.won == "":
		w.won = r.key
		w.stop()
	case r.key != "":
		w.rang = append(w.rang, r.key)
	}
}

// collectAll collects the n results: until the first BLPOP returns or
// ctx ends, then unblocking those still running until each has
// returned. A BLPOP may not have started yet when its CLIENT UNBLOCK
// arrives, so the unblocks repeat until every result is in.
func (w *clusterWait) collectAll(ctx context.Context, n int) {
	done := ctx.Done()
	for n > 0 && !w.isStopped() {
		select {
		case r := <-w.results:
			w.collect(r)
			n--
		case <-done:
			w.stop()
			done = nil
		}
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for n > 0 {
		w.unblock(ctx)
		select {
		case r := <-w.results:
			w.collect(r)
			n--
		case <-tick.C:
		}
	}
}

// unblock sends CLIENT UNBLOCK to each BLPOP still running.
func (w *clusterWait) unblock(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.ids {
		if !w.finished[i] && w.ids[i] != 0 {
			_ = w.nodes[i].ClientUnblock(context.WithoutCancel(ctx), w.ids[i]).Err()
		}
	}
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
func ringAgain(ctx context.Context, rdb redis.Cmdable, keys []string) {
	for _, k := range keys {
		_ = Ring(context.WithoutCancel(ctx), rdb, k)
	}
}

// Ring rings the doorbell key: a list of at most one element, which an
// idle worker's BLPOP takes.
func Ring(ctx context.Context, rdb redis.Cmdable, key string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, key, "1")
		p.LTrim(ctx, key, 0, 0)
		return nil
	})
	return err
}

func queueNames(keys []string, byKey map[string]string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}
