package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReplicationConfig makes pushes wait for replicas, so that a dispatch
// that returned without error survives the failover of its master.
//
// Redis replicates asynchronously: a master acknowledges a write before
// its replicas have it, and a write it acknowledged just before a
// failover is lost when a replica is promoted without it. With Replicas
// set, every push (Dispatch, Push, Later, PushBulk) sends WAIT on the
// same connection right after its script and returns only once that many
// replicas have acknowledged it. A push that too few replicas
// acknowledge within Timeout returns an error wrapping ErrNotReplicated:
// the job was pushed to the master and may or may not survive a
// failover. The caller may push the same envelope again: while the first
// copy is still queued, a push of the same ID and payload adds nothing;
// once it has run, it runs again (at least once, never lost).
//
// WAIT does not make Redis strongly consistent: a replica that has the
// job could still lose a later election to one that does not. With one
// replica, or with Sentinel's usual promotion of the most up-to-date
// replica, it closes the window in which an acknowledged push can be
// lost. Workers need no WAIT: a reservation, ack or release lost in a
// failover only makes a job run again (at least once), and the next link
// of a chain is pushed before its predecessor is acked, so replication
// order keeps it.
type ReplicationConfig struct {
	// Replicas is how many replicas must acknowledge each push. 0 (the
	// default) does not wait.
	Replicas int
	// Timeout bounds the wait. Default 1s when Replicas is set. Keep it
	// below the client's read timeout (3s by default).
	Timeout time.Duration
}

func (c *ReplicationConfig) setDefaults() {
	if c.Replicas > 0 && c.Timeout == 0 {
		c.Timeout = time.Second
	}
}

func (c *ReplicationConfig) validate() error {
	switch {
	case c.Replicas < 0:
		return fmt.Errorf("%w: EngineConfig.Replication.Replicas (%d) must not be negative", ErrInvalid, c.Replicas)
	case c.Timeout < 0:
		return fmt.Errorf("%w: EngineConfig.Replication.Timeout (%v) must not be negative", ErrInvalid, c.Timeout)
	case c.Replicas > 0 && c.Timeout < time.Millisecond:
		return fmt.Errorf("%w: EngineConfig.Replication.Timeout (%v) must be at least 1ms", ErrInvalid, c.Timeout)
	}
	return nil
}

// runPush runs the script calls of a push, followed by WAIT if the
// engine waits for replicas. It returns nil if every call went well, and
// otherwise one error per call: the call's own, or else that of the WAIT
// that covers it.
func (e *Engine) runPush(ctx context.Context, calls []call) []error {
	r := e.cfg.Replication
	if r.Replicas == 0 {
		cmds, err := runAll(ctx, e.rdb, calls)
		if err == nil {
			return nil
		}
		return cmdErrs(cmds)
	}
	cc, ok := e.rdb.(*redis.ClusterClient)
	if !ok {
		return runWaited(ctx, e.rdb, calls, r)
	}
	// WAIT counts the replicas of the master it is sent to, for the
	// writes of its connection: each master gets a pipeline of its own
	// calls and a WAIT.
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(calls))
		}
		errs[i] = err
	}
	byNode := map[*redis.Client][]int{}
	var order []*redis.Client
	for i, c := range calls {
		node, err := cc.MasterForKey(ctx, c.keys[0])
		if err != nil {
			fail(i, err)
			continue
		}
		if _, seen := byNode[node]; !seen {
			order = append(order, node)
		}
		byNode[node] = append(byNode[node], i)
	}
	for _, node := range order {
		idx := byNode[node]
		sub := make([]call, len(idx))
		for j, i := range idx {
			sub[j] = calls[i]
		}
		for j, err := range runWaited(ctx, node, sub, r) {
			if err != nil {
				fail(idx[j], err)
			}
		}
	}
	return errs
}

// cmdErrs returns the error of each command; redis.Nil is no error.
func cmdErrs(cmds []*redis.Cmd) []error {
	errs := make([]error, len(cmds))
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			errs[i] = err
		}
	}
	return errs
}

// firstPushErr is the error a push reports for errs from runPush: the
// first call's own error, else the first WAIT error, else nil.
func firstPushErr(errs []error) error {
	var waitErr error
	for _, err := range errs {
		switch {
		case err == nil:
		case !errors.Is(err, ErrNotReplicated):
			return err
		case waitErr == nil:
			waitErr = err
		}
	}
	return waitErr
}

// runWaited runs calls and WAIT in one pipeline, which go-redis sends on
// one connection, so WAIT covers exactly these writes. Calls that fail
// with NOSCRIPT did nothing and go again by source, with a WAIT of their
// own. It returns errors as runPush does.
func runWaited(ctx context.Context, rdb redis.Cmdable, calls []call, r ReplicationConfig) []error {
	cmds := make([]*redis.Cmd, len(calls))
	waitOf := make([]*redis.Cmd, len(calls))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		evalAll(ctx, p, calls, cmds)
		w := p.Do(ctx, "WAIT", r.Replicas, r.Timeout.Milliseconds())
		for i := range waitOf {
			waitOf[i] = w
		}
		return nil
	})
	sendAgain(ctx, rdb, calls, cmds, func(p redis.Pipeliner, again []int) {
		w := p.Do(ctx, "WAIT", r.Replicas, r.Timeout.Milliseconds())
		for _, i := range again {
			waitOf[i] = w
		}
	})
	var errs []error
	for i, cmd := range cmds {
		err := cmd.Err()
		if err == nil || err == redis.Nil {
			err = waitErr(waitOf[i], r)
		}
		if err != nil {
			if errs == nil {
				errs = make([]error, len(calls))
			}
			errs[i] = err
		}
	}
	return errs
}

// waitErr reads the reply of a WAIT.
func waitErr(w *redis.Cmd, r ReplicationConfig) error {
	n, err := w.Int64()
	if err != nil {
		return fmt.Errorf("%w: WAIT: %v", ErrNotReplicated, err)
	}
	if n < int64(r.Replicas) {
		return fmt.Errorf("%w: %d of %d replicas within %v", ErrNotReplicated, n, r.Replicas, r.Timeout)
	}
	return nil
}
