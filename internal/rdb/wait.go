package rdb

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/send"
)

// The waiting pipeline of an idle worker: a BLPOP on doorbells, with
// script calls (a reserve, which migrates first) behind it on the same
// connection.

// WaitRun sends a BLPOP on keys, for up to timeout (to the ms), and the
// calls behind it, in one pipeline: Redis runs the calls the moment the
// BLPOP returns, whether a key had an element or the timeout passed, so
// the calls' replies come in the same round trip as the wake-up. Calls
// whose script Redis had not loaded are sent again by their source
// (send.Again).
//
// It returns the calls' replies; popped, the key the BLPOP took an
// element from, "" if it timed out; and waitErr, the BLPOP's own error.
func (s *Store) WaitRun(ctx context.Context, keys []string, timeout time.Duration, calls []Call) (replies []Reply, popped string, waitErr error) {
	args := make([]any, 0, len(keys)+2)
	args = append(args, "BLPOP")
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, fmt.Sprintf("%.3f", timeout.Seconds()))

	var bell *redis.Cmd
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		bell = p.Do(ctx, args...)
		send.Pipe(ctx, p, calls, cmds)
		return nil
	})
	send.Again(ctx, s.c, calls, cmds, nil) // the scripts were flushed
	switch reply, err := bell.StringSlice(); {
	case err == redis.Nil:
	case err != nil:
		waitErr = err
	case len(reply) == 2:
		popped = reply[0]
	}
	return cmds, popped, waitErr
}

// ReadTimeout is the read timeout of the store's client, if it is a
// single node or a cluster client; 0 otherwise.
func (s *Store) ReadTimeout() time.Duration {
	switch c := s.c.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout
	case *redis.ClusterClient:
		return c.Options().ReadTimeout
	}
	return 0
}
