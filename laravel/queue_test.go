package laravel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
)

type queueBundle struct {
	ctx    context.Context
	q      *laravel.Queue
	rdb    redis.UniversalClient
	prefix string
	keys   func(suffix string) string
}

// openQueues opens a Laravel connection on each backend, with a key
// prefix of its own, as Laravel's Redis connection prefix.
func openQueues(t *testing.T) map[string]queueBundle {
	t.Helper()
	out := map[string]queueBundle{}
	for _, b := range redistest.Backends(t) {
		prefix := redistest.Prefix(t) + "_laravel_database_"
		u := laravel.Scheme + b.URL
		if strings.Contains(u, "?") {
			u += "&"
		} else {
			u += "?"
		}
		q, closer, err := laravel.Open(context.Background(), u+"prefix="+prefix)
		require.NoError(t, err)
		t.Cleanup(func() { _ = closer() })
		tag := q.Config().HashTag
		out[b.Name] = queueBundle{ctx: context.Background(), q: q, rdb: q.Client(), prefix: prefix, keys: func(s string) string {
			name := "default"
			if tag {
				name = "{default}"
			}
			return prefix + "queues:" + name + s
		}}
	}
	return out
}

func payload(id string) []byte {
	return fmt.Appendf(nil, `{"uuid":"%s","displayName":"App\\Jobs\\X","job":"App\\Jobs\\X@handle","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":[],"id":"%s","attempts":0}`, id, id)
}

func TestQueueLayout(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, q := b.ctx, b.q
			require.NoError(t, q.Push(ctx, "default", payload("a"), payload("b")))
			n, err := b.rdb.LLen(ctx, b.keys("")).Result()
			require.NoError(t, err)
			require.EqualValues(t, 2, n)
			n, err = b.rdb.LLen(ctx, b.keys(":notify")).Result()
			require.NoError(t, err)
			require.EqualValues(t, 2, n, "one notify entry per ready job")

			r, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.NoError(t, r.DecodeErr)
			require.Equal(t, payload("a"), r.Raw)
			require.EqualValues(t, 1, r.Payload.Attempts)
			require.Equal(t, "a", r.Payload.ID)
			// The reserved copy is the payload as pushed, byte for byte,
			// but for its attempts: [] stays [], nulls and key order stay.
			require.Equal(t, strings.Replace(string(payload("a")), `"attempts":0}`, `"attempts":1}`, 1), string(r.Reserved))
			score, err := b.rdb.ZScore(ctx, b.keys(":reserved"), string(r.Reserved)).Result()
			require.NoError(t, err)
			now, err := b.rdb.Time(ctx).Result()
			require.NoError(t, err)
			require.InDelta(t, now.Unix()+90, score, 2, "reserved until now + retry_after")

			require.NoError(t, q.Extend(ctx, r, 10*time.Minute))
			score2, err := b.rdb.ZScore(ctx, b.keys(":reserved"), string(r.Reserved)).Result()
			require.NoError(t, err)
			require.Greater(t, score2, score)

			require.NoError(t, q.Release(ctx, r, 0))
			require.ErrorIs(t, q.Release(ctx, r, 0), laravel.ErrNotReserved, "a second release finds nothing")
			require.ErrorIs(t, q.Delete(ctx, r), laravel.ErrNotReserved)
			s, err := q.Sizes(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, laravel.Sizes{Ready: 1, Delayed: 1}, s)

			// The released job is due now: the next pop migrates it behind b.
			r2, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, "b", r2.Payload.ID)
			require.NoError(t, q.Delete(ctx, r2))
			r3, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, "a", r3.Payload.ID)
			require.EqualValues(t, 2, r3.Payload.Attempts, "attempts count pops")
			require.Equal(t, strings.Replace(string(payload("a")), `"attempts":0}`, `"attempts":2}`, 1), string(r3.Reserved))

			// An expired reservation goes back to the queue.
			require.NoError(t, b.rdb.ZAdd(ctx, b.keys(":reserved"), redis.Z{Score: 1, Member: string(r3.Reserved)}).Err())
			delayed, expired, err := q.Migrate(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, 0, delayed)
			require.Equal(t, 1, expired)
			require.ErrorIs(t, q.Delete(ctx, r3), laravel.ErrNotReserved, "the old reservation is gone")
			r4, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.EqualValues(t, 3, r4.Payload.Attempts)
			require.NoError(t, q.Delete(ctx, r4))

			// Later: in the delayed set, due after the delay.
			require.NoError(t, q.Later(ctx, "default", 1500*time.Millisecond, payload("c")))
			score, err = b.rdb.ZScore(ctx, b.keys(":delayed"), string(payload("c"))).Result()
			require.NoError(t, err)
			require.InDelta(t, now.Unix()+2, score, 2, "delay rounded up to whole seconds")
			r5, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Nil(t, r5, "not due yet")

			s, err = q.Sizes(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, laravel.Sizes{Delayed: 1}, s)
		})
	}
}

func TestPopPoisonPayload(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, q := b.ctx, b.q
			for _, bad := range []string{
				"not json", "", `["a"]`, `{"attempts":"x"}`, `{"attempts":"1"}`, `{"attempts":null}`,
				`{"job":"X","attempts":1} {}`, `{"job":"X","attempts":1e400}`, `{"job":"X","data":{"attempts":1}}`,
			} {
				require.NoError(t, q.Push(ctx, "default", []byte(bad)))
				r, err := q.Pop(ctx, "default")
				require.NoError(t, err)
				require.Error(t, r.DecodeErr, bad)
				require.Equal(t, bad, string(r.Raw))
				require.Equal(t, bad, string(r.Reserved), "kept as pushed")
				require.NoError(t, q.Delete(ctx, r))
			}
		})
	}
}

// TestWrongTypedKeyLosesNoJob: a key of another type fails pop, push,
// release and migrate before they write, so no job leaves one key
// without reaching the other.
func TestWrongTypedKeyLosesNoJob(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, q := b.ctx, b.q
			require.NoError(t, q.Push(ctx, "default", payload("a")))
			// The reserved set holds a string: pop must not take the job.
			require.NoError(t, b.rdb.Set(ctx, b.keys(":reserved"), "x", 0).Err())
			_, err := q.Pop(ctx, "default")
			require.ErrorContains(t, err, "WRONGTYPE")
			n, err := b.rdb.LLen(ctx, b.keys("")).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "the job is still ready")
			_, _, err = q.Migrate(ctx, "default")
			require.ErrorContains(t, err, "WRONGTYPE")
			require.NoError(t, b.rdb.Del(ctx, b.keys(":reserved")).Err())

			// The doorbell holds a string: push must not write the job.
			require.NoError(t, b.rdb.Set(ctx, b.keys(":notify"), "x", 0).Err())
			require.ErrorContains(t, q.Push(ctx, "default", payload("b")), "WRONGTYPE")
			n, err = b.rdb.LLen(ctx, b.keys("")).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "nothing pushed")
			require.NoError(t, b.rdb.Del(ctx, b.keys(":notify")).Err())

			// The delayed set holds a string: release keeps the reservation.
			r, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.NoError(t, b.rdb.Set(ctx, b.keys(":delayed"), "x", 0).Err())
			require.ErrorContains(t, q.Release(ctx, r, time.Second), "WRONGTYPE")
			n, err = b.rdb.ZCard(ctx, b.keys(":reserved")).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "still reserved")
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://127.0.0.1:6379",
		"laravel+redis://127.0.0.1:6379?retry_after=x",
		"laravel+redis://127.0.0.1:6379?retry_after=0&block_for=-1",
		"laravel+redis://127.0.0.1:6379?prefix={x}",
	} {
		_, _, err := laravel.Open(context.Background(), u)
		require.Error(t, err, u)
	}
}

// TestNoScriptRecovery: every operation works on a server that lost its
// scripts (SCRIPT FLUSH, a restart, a failover) since the last call.
func TestNoScriptRecovery(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, q := b.ctx, b.q
			flush := func() { require.NoError(t, b.rdb.ScriptFlush(ctx).Err()) }

			flush()
			require.NoError(t, q.Push(ctx, "default", payload("a"), payload("b")))
			flush()
			require.NoError(t, q.Later(ctx, "default", 0, payload("c")))
			flush()
			delayed, expired, err := q.Migrate(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, [2]int{1, 0}, [2]int{delayed, expired})
			flush()
			r, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, payload("a"), r.Raw)
			flush()
			require.NoError(t, q.Extend(ctx, r, time.Minute))
			flush()
			require.NoError(t, q.Release(ctx, r, time.Hour))
			flush()
			r, err = q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, payload("b"), r.Raw)
			flush()
			require.NoError(t, q.Delete(ctx, r))
			flush()
			sizes, err := q.Sizes(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, laravel.Sizes{Ready: 1, Delayed: 1}, sizes)
		})
	}
}
