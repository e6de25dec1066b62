package runtime

import (
	"context"
	"fmt"
	"time"
)

// waitReserve waits up to timeout for a doorbell of queues, then migrates
// and reserves up to n jobs of queues[0], all in one round trip: the
// reserve script, which migrates first, is pipelined behind the BLPOP on
// the same connection, so Redis runs it the moment the BLPOP returns,
// whether a doorbell rang or the timeout passed. An idle worker thus picks up a new job one round trip
// after its push, not two.
//
// rang is the queue whose doorbell rang, or "". ok is false, and nothing
// is sent, when the queues cannot be waited on this way: partitioned
// queues, or several queues on a cluster (their doorbells are in different
// slots). Jobs are returned even when the BLPOP itself failed.
//
// hold reserves the jobs held, as Engine.reserve does.
//
// If wakeID is not "", the BLPOP also waits on that worker's wake list, so
// Engine.wake ends it at once when the worker stops; the script still
// run then.
func (e *Engine) waitReserve(ctx context.Context, queues []string, timeout time.Duration, n int, lease time.Duration, hold bool, wakeID string) (rang string, b ReserveResult, ok bool, err error) {
	if len(queues) == 0 || n < 1 || lease < time.Millisecond || timeout < time.Millisecond {
		return "", ReserveResult{}, false, nil
	}
	for _, q := range queues {
		if e.partitionsOf(q) != nil {
			return "", ReserveResult{}, false, nil
		}
	}
	if e.store.IsCluster() && len(queues) > 1 {
		return "", ReserveResult{}, false, nil
	}
	timeout = e.blockFor(timeout)
	q := queues[0]
	keys := make([]string, 0, len(queues)+1)
	byKey := make(map[string]string, len(queues))
	for _, name := range queues {
		k := e.keys.Queue(name).Notify
		byKey[k] = name
		keys = append(keys, k)
	}
	if wakeID != "" {
		keys = append(keys, e.keys.Wake(q, wakeID)) // not in byKey: it returns ""
	}
	if e.lost.Pending() {
		e.recoverLost(ctx)
	}
	r := e.reserveArgs(q, n, lease, hold)
	got, popped, berr, err := e.store.WaitReserve(ctx, keys, timeout, r)
	if err != nil {
		e.noteLost(r, err)
		return "", ReserveResult{}, true, fmt.Errorf("reserve from %q: %w", q, err)
	}
	b = e.reserveResult(r, got)
	if berr != nil {
		return "", b, true, fmt.Errorf("wait on %v: %w", queues, berr)
	}
	rang = byKey[popped]
	return rang, b, true, nil
}

// blockFor shortens a BLPOP timeout that, with Redis's hz tick on top,
// could outlast the client's read timeout: the pipeline would fail and
// the reply of the reserve behind the BLPOP would be lost, leaving its
// jobs reserved by no one until their leases run out.
func (e *Engine) blockFor(timeout time.Duration) time.Duration {
	read := e.store.ReadTimeout()
	if read > 0 {
		// The tick is 100ms at the default hz of 10.
		timeout = min(timeout, (read-200*time.Millisecond)/2)
	}
	return max(timeout, time.Millisecond)
}
