package runtime

import (
	"context"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// ReplicationConfig makes pushes wait for replicas, so that a dispatch
// that returned without error survives the failover of its master.
//
// Redis replicates asynchronously: a master acknowledges a write before
// its replicas have it, and a write it acknowledged just before a
// failover is lost when a replica is promoted without it. With Replicas
// set, every push (Dispatch, Push, Later, PushMany) sends WAIT on the
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
// engine waits for replicas (send.Pushed).
func (e *Engine) runPush(ctx context.Context, calls []call) []error {
	r := e.cfg.Replication
	return e.store.Pushed(ctx, calls, jobrdb.Replicas{N: r.Replicas, Timeout: r.Timeout})
}
