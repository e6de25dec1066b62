package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/internal/send"
	"github.com/redis/go-redis/v9"
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
	if _, cluster := e.rdb.(*redis.ClusterClient); cluster && len(queues) > 1 {
		return "", ReserveResult{}, false, nil
	}
	timeout = e.blockFor(timeout)
	q := queues[0]
	args := make([]any, 0, len(queues)+3)
	args = append(args, "BLPOP")
	byKey := make(map[string]string, len(queues))
	for _, name := range queues {
		k := e.keys.Queue(name).Notify
		byKey[k] = name
		args = append(args, k)
	}
	if wakeID != "" {
		args = append(args, e.keys.Wake(q, wakeID)) // not in byKey: it returns ""
	}
	args = append(args, fmt.Sprintf("%.3f", timeout.Seconds()))
	rc, token := e.reserveCall(q, n, lease, hold)
	calls := []call{rc}

	var bell *redis.Cmd
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		bell = p.Do(ctx, args...)
		send.Pipe(ctx, p, calls, cmds)
		return nil
	})
	send.Again(ctx, e.rdb, calls, cmds, nil) // the scripts were flushed
	for _, c := range cmds {
		if err = c.Err(); err != nil {
			break
		}
	}
	if err == nil {
		b, err = parseReserve(q, token, hold, cmds[0])
		e.flow.note(q, b.limited)
	}
	if err != nil {
		return "", ReserveResult{}, true, fmt.Errorf("reserve from %q: %w", q, err)
	}
	switch reply, berr := bell.StringSlice(); {
	case berr == redis.Nil:
	case berr != nil:
		return "", b, true, fmt.Errorf("wait on %v: %w", queues, berr)
	case len(reply) == 2:
		rang = byKey[reply[0]]
	}
	return rang, b, true, nil
}

// blockFor shortens a BLPOP timeout that, with Redis's hz tick on top,
// could outlast the client's read timeout: the pipeline would fail and
// the reply of the reserve behind the BLPOP would be lost, leaving its
// jobs reserved by no one until their leases run out.
func (e *Engine) blockFor(timeout time.Duration) time.Duration {
	var read time.Duration
	switch c := e.rdb.(type) {
	case *redis.Client:
		read = c.Options().ReadTimeout
	case *redis.ClusterClient:
		read = c.Options().ReadTimeout
	}
	if read > 0 {
		// The tick is 100ms at the default hz of 10.
		timeout = min(timeout, (read-200*time.Millisecond)/2)
	}
	return max(timeout, time.Millisecond)
}
