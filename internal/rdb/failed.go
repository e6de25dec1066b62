package rdb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/runtime/lua"
)

// The failed store of a queue: the failed set, payloads, infos and
// errors (keyspace.QueueKeys), which the fail, cancel and failed_record
// scripts write and the retry, forget and prune scripts empty.

var (
	scriptRetry  = lua.Get("retry")
	scriptForget = lua.Get("forget")
	scriptPrune  = lua.Get("prune")
	scriptRecord = lua.Get("failed_record")
)

// FailedInfo is what the failed store keeps of a failure besides the
// payload and the time (the failed info hash).
type FailedInfo struct {
	Name     string `msgpack:"n"`
	Error    string `msgpack:"e"`
	Attempts int    `msgpack:"a"`
	// Token is the token of the reservation the job failed under: it
	// tells the hooks sweep which fail recorded this entry.
	Token string `msgpack:"t,omitempty"`
	// Cancelled marks a job an operator cancelled.
	Cancelled bool `msgpack:"c,omitempty"`
}

// Encode encodes f as the failed info hash holds it.
func (f FailedInfo) Encode() ([]byte, error) { return msgpack.Marshal(f) }

// ParseFailedInfo reads an entry of the failed info hash.
func ParseFailedInfo(raw string) (FailedInfo, error) {
	var f FailedInfo
	err := msgpack.Unmarshal([]byte(raw), &f)
	return f, err
}

// failedKeys are the keys of queue's failed store, as the retry, forget
// and prune scripts take them.
func (s *Store) failedKeys(queue string) []string {
	qk := s.keys.Queue(queue)
	return []string{qk.Failed, qk.FailedPayloads, qk.FailedInfo, qk.FailedErrors}
}

// failedPer is the most IDs of one retry or forget call, and the most
// jobs of one prune call.
const failedPer = 1000

// ids returns ids as script arguments.
func idArgs(ids []string) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// Retry moves failed jobs ids of step's queue back through step, an
// enqueue step of WidthPlain, with their attempts reset and their
// attempts' errors kept, failedPer a call, and returns the IDs it moved;
// it skips the IDs it does not hold.
// On an error, it returns those moved until then.
func (s *Store) Retry(ctx context.Context, step Enqueue, ids []string) ([]string, error) {
	qk := &step.Queue
	keys := step.Keys(qk.Failed, qk.FailedPayloads, qk.FailedInfo, qk.FailedErrors, qk.Errors)
	var done []string
	for len(ids) > 0 {
		n := min(failedPer, len(ids))
		got, err := Call{Script: scriptRetry, Keys: keys, Args: idArgs(ids[:n])}.Run(ctx, s.c).StringSlice()
		if err != nil {
			return done, err
		}
		done = append(done, got...)
		ids = ids[n:]
	}
	return done, nil
}

// Forget deletes failed jobs ids of queue, failedPer a call, and returns
// how many there were (on an error, until then).
func (s *Store) Forget(ctx context.Context, queue string, ids []string) (int64, error) {
	keys := s.failedKeys(queue)
	var total int64
	for len(ids) > 0 {
		n := min(failedPer, len(ids))
		got, err := Call{Script: scriptForget, Keys: keys, Args: idArgs(ids[:n])}.Run(ctx, s.c).Int64()
		if err != nil {
			return total, err
		}
		total += got
		ids = ids[n:]
	}
	return total, nil
}

// Prune deletes the failed jobs of queue that failed more than age ms
// ago (by the Redis clock), failedPer a call, and returns how many went
// (on an error, until then).
func (s *Store) Prune(ctx context.Context, queue string, age int64) (int64, error) {
	keys := s.failedKeys(queue)
	var total int64
	for {
		n, err := Call{Script: scriptPrune, Keys: keys, Args: []any{age, failedPer}}.Run(ctx, s.c).Int64()
		total += n
		if err != nil || n < failedPer {
			return total, err
		}
	}
}

// RecordFailed adds job id of queue, its payload and info, to the failed
// store, then trims it to maxCount jobs and maxAge ms (0: no bound). It
// returns false, and changes nothing, if the store holds id already, and
// how many old entries trimming dropped.
func (s *Store) RecordFailed(ctx context.Context, queue, id string, payload []byte, info FailedInfo, maxCount, maxAge int64) (added bool, trimmed int64, err error) {
	b, err := info.Encode()
	if err != nil {
		return false, 0, err
	}
	keys := append(s.failedKeys(queue), s.keys.Queue(queue).FailedTrimmed)
	v, err := Call{Script: scriptRecord, Keys: keys, Args: []any{maxCount, maxAge, id, payload, b}}.Run(ctx, s.c).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("unexpected reply %v", v)
	}
	return v[0] == 1, v[1], nil
}

// FailedTrim is what trimming dropped from a queue's failed store
// (keyspace's FailedTrimmed).
type FailedTrim struct {
	// Count is how many failed jobs were trimmed in all.
	Count int64
	// At is the Redis ms of the last trim (0: never); Last is how many
	// it dropped.
	At, Last int64
}

// FailedTrimmed reads what trimming dropped from the failed stores of
// queues, one entry per queue, in one round trip.
func (s *Store) FailedTrimmed(ctx context.Context, queues []string) ([]FailedTrim, error) {
	cmds := make([]*redis.SliceCmd, len(queues))
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, q := range queues {
			cmds[i] = p.HMGet(ctx, s.keys.Queue(q).FailedTrimmed, "count", "at", "last")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]FailedTrim, len(queues))
	for i, cmd := range cmds {
		v := cmd.Val()
		if len(v) != 3 {
			continue
		}
		out[i] = FailedTrim{Count: intField(v[0]), At: intField(v[1]), Last: intField(v[2])}
	}
	return out, nil
}

// intField reads an integer hash field as HMGET returns it (0 if absent
// or not an integer).
func intField(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
