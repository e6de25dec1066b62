package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// failOne pushes one job to queue, reserves it and fails it with msg. It
// returns the job's ID.
func failOne(t *testing.T, b bundle, queue, msg string) string {
	t.Helper()
	require.NoError(t, b.engine.Push(b.ctx, env(queue, "app.Job", msg)))
	j := mustReserve(t, b, queue, 1).Jobs[0]
	require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: j.Ref, Name: "app.Job", Err: errors.New(msg), Attempts: j.Attempts}))
	return j.ID
}

// failInOrder fails n jobs one at a time, a few milliseconds apart so each
// has its own failed-at time, and returns their IDs, oldest first.
func failInOrder(t *testing.T, b bundle, queue string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		if i > 0 {
			time.Sleep(3 * time.Millisecond)
		}
		ids[i] = failOne(t, b, queue, fmt.Sprintf("failure %d", i))
	}
	return ids
}

// failMany pushes n jobs to queue and fails them all in one Fail call.
func failMany(t *testing.T, b bundle, queue string, n int) []string {
	t.Helper()
	out := make([]runtime.Outgoing, n)
	for i := range out {
		out[i] = runtime.Outgoing{Envelope: env(queue, "app.Job", fmt.Sprint(i))}
	}
	require.NoError(t, b.engine.PushMany(b.ctx, out))
	batch := mustReserve(t, b, queue, n)
	require.Len(t, batch.Jobs, n)
	fs := make([]runtime.Failure, n)
	ids := make([]string, n)
	for i, j := range batch.Jobs {
		fs[i] = runtime.Failure{Ref: j.Ref, Name: "app.Job", Err: errors.New("boom"), Attempts: j.Attempts}
		ids[i] = j.ID
	}
	require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, fs...))
	return ids
}

func failedCount(t *testing.T, b bundle, queue string) int64 {
	t.Helper()
	n, err := runtime.NewInspector(b.engine).Failed().Count(b.ctx, queue)
	require.NoError(t, err)
	return n
}

// failedIDs lists every failed job of queue, newest first.
func failedIDs(t *testing.T, b bundle, queue string) []string {
	t.Helper()
	jobs, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, queue, 0, 100_000)
	require.NoError(t, err)
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func TestFailMovesJobToStore(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		e := env("default", "app.SendMail", "to: a@example.com")
		require.NoError(t, b.engine.Push(b.ctx, e))
		encoded, err := b.rdb.HGet(b.ctx, b.prefix+":{default}:payloads", e.ID).Bytes()
		require.NoError(t, err)

		// A second attempt, so the stored count is not just the default.
		j := mustReserve(t, b, "default", 1).Jobs[0]
		require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, j.Ref))
		j = mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, 2, j.Attempts)
		require.Equal(t, encoded, j.Payload)

		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{
			Ref: j.Ref, Name: e.Name, Err: fmt.Errorf("send mail: %w", errors.New("connection reset")), Attempts: j.Attempts,
		}))
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b, "default"))
		require.Equal(t, int64(1), failedCount(t, b, "default"))
		require.ErrorIs(t, runtime.NewBroker(b.engine).Ack(b.ctx, j.Ref), runtime.ErrLeaseLost, "a failed job is no longer reserved")

		got, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", e.ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, e.ID, got.ID)
		require.Equal(t, "default", got.Queue)
		require.Equal(t, "app.SendMail", got.Name)
		require.Equal(t, encoded, got.Payload, "the payload is the one pushed")
		back, err := runtime.DecodeEnvelope(got.Queue, got.ID, got.Payload)
		require.NoError(t, err)
		require.Equal(t, e, back)
		require.Equal(t, "send mail: connection reset", got.Error)
		require.Equal(t, 2, got.Attempts)
		require.WithinDuration(t, time.Now(), got.FailedAt, 2*time.Second)

		_, ok, err = runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", "no-such-id")
		require.NoError(t, err)
		require.False(t, ok)
		_, ok, err = runtime.NewInspector(b.engine).Failed().Get(b.ctx, "other", e.ID)
		require.NoError(t, err)
		require.False(t, ok, "failed jobs are kept per queue")

		// Nothing of the live job is left behind.
		keys := jobKeys(t, b, "default", time.Minute)
		require.ElementsMatch(t, []string{
			b.prefix + ":{default}:failed", b.prefix + ":{default}:failed:payloads", b.prefix + ":{default}:failed:info",
		}, slices.DeleteFunc(keys, func(k string) bool { return k == b.prefix+":{default}:notify" }))
	})
}

func TestFailAcrossQueues(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("a", "app.Job", "")))
		require.NoError(t, b.engine.Push(b.ctx, env("b", "app.Job", "")))
		ja := mustReserve(t, b, "a", 1).Jobs[0]
		jb := mustReserve(t, b, "b", 1).Jobs[0]
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx,
			runtime.Failure{Ref: ja.Ref, Name: "app.Job", Err: errors.New("a failed"), Attempts: 1},
			runtime.Failure{Ref: jb.Ref, Name: "app.Job", Err: errors.New("b failed"), Attempts: 1},
		))
		for q, id := range map[string]string{"a": ja.ID, "b": jb.ID} {
			require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b, q))
			got, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, q, id)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, q+" failed", got.Error)
		}
	})
}

func TestFailedListIsPagedNewestFirst(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		ids := failInOrder(t, b, "default", 5)

		var got []runtime.FailedJob
		var pages []int
		for offset := 0; ; offset += 2 {
			page, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, "default", offset, 2)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			pages = append(pages, len(page))
			got = append(got, page...)
		}
		require.Equal(t, []int{2, 2, 1}, pages)
		gotIDs := make([]string, len(got))
		for i, j := range got {
			gotIDs[i] = j.ID
			require.Equal(t, "default", j.Queue)
			require.Equal(t, "app.Job", j.Name)
			require.NotEmpty(t, j.Payload)
			require.Equal(t, fmt.Sprintf("failure %d", len(got)-1-i), j.Error)
			if i > 0 {
				require.True(t, j.FailedAt.Before(got[i-1].FailedAt), "newest first")
			}
		}
		require.Equal(t, reversed(ids), gotIDs)

		page, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, "default", 10, 2)
		require.NoError(t, err)
		require.Empty(t, page, "past the end")
		page, err = runtime.NewInspector(b.engine).Failed().List(b.ctx, "empty", 0, 10)
		require.NoError(t, err)
		require.Empty(t, page)

		for _, c := range []struct{ offset, limit int }{{-1, 2}, {0, 0}, {0, -5}} {
			_, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, "default", c.offset, c.limit)
			require.ErrorIs(t, err, runtime.ErrInvalid, "offset %d, limit %d", c.offset, c.limit)
		}
		_, err = runtime.NewInspector(b.engine).Failed().List(b.ctx, "a{b}", 0, 2)
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}

func TestFailedListLargeLimit(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		ids := failInOrder(t, b, "default", 3)
		// "Everything from offset on": offset+limit must not overflow.
		for offset := range 4 {
			page, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, "default", offset, math.MaxInt)
			require.NoError(t, err)
			require.Len(t, page, 3-offset, "offset %d", offset)
			for i, j := range page {
				require.Equal(t, ids[2-offset-i], j.ID)
			}
		}
	})
}

func TestFailedRetry(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		// Three jobs, each failed after two attempts, one with an exception.
		var ids []string
		payloads := map[string][]byte{}
		for i := range 3 {
			require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", fmt.Sprint(i))))
			j := mustReserve(t, b, "default", 1).Jobs[0]
			require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{Exception: true}, j.Ref))
			j = mustReserve(t, b, "default", 1).Jobs[0]
			require.Equal(t, 2, j.Attempts)
			require.Equal(t, 1, j.Exceptions)
			require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: j.Ref, Name: "app.Job", Err: errors.New("boom"), Attempts: j.Attempts}))
			ids = append(ids, j.ID)
			payloads[j.ID] = j.Payload
		}
		require.Equal(t, runtime.Sizes{Failed: 3}, sizes(t, b, "default"))

		// One, with an unknown ID that is skipped.
		done, err := runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", "no-such-id", ids[0])
		require.NoError(t, err)
		require.Equal(t, []string{ids[0]}, done)
		require.Equal(t, runtime.Sizes{Ready: 1, Failed: 2}, sizes(t, b, "default"))
		_, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.False(t, ok, "a retried job leaves the store")

		j := mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, ids[0], j.ID)
		require.Equal(t, 1, j.Attempts, "attempts are reset")
		require.Equal(t, 0, j.Exceptions, "exceptions are reset")
		require.Equal(t, payloads[ids[0]], j.Payload)
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, j.Ref))

		// Retrying it again is a no-op: it is no longer in the store.
		done, err = runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.Empty(t, done)

		// Many.
		done, err = runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", ids[1], "nope", ids[2])
		require.NoError(t, err)
		require.Equal(t, ids[1:], done)
		require.Equal(t, runtime.Sizes{Ready: 2}, sizes(t, b, "default"))
		batch := mustReserve(t, b, "default", 10)
		require.Len(t, batch.Jobs, 2)
		for i, j := range batch.Jobs {
			require.Equal(t, ids[1+i], j.ID, "retried in the order given")
			require.Equal(t, 1, j.Attempts)
			require.Equal(t, 0, j.Exceptions)
		}

		// Nothing to retry.
		done, err = runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default")
		require.NoError(t, err)
		require.Empty(t, done)
		_, err = runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "", ids[0])
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}

func TestFailedRetryWakesWaiter(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		id := failOne(t, b, "default", "boom")
		// Consume any doorbell left by the push.
		_, err := runtime.NewBroker(b.engine).Wait(b.ctx, []string{"default"}, 10*time.Millisecond)
		require.NoError(t, err)

		_, err = runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", id)
		require.NoError(t, err)
		woke, err := runtime.NewBroker(b.engine).Wait(b.ctx, []string{"default"}, 2*time.Second)
		require.NoError(t, err)
		require.Equal(t, "default", woke, "a retry rings the queue's doorbell")
	})
}

func TestFailedRetryAll(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const n = 1500 // more than one retry call of 1,000
		ids := failMany(t, b, "default", n)
		require.Equal(t, int64(n), failedCount(t, b, "default"))

		got, err := runtime.NewInspector(b.engine).Failed().RetryAll(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, n, got)
		require.Equal(t, runtime.Sizes{Ready: n}, sizes(t, b, "default"))

		batch := mustReserve(t, b, "default", 2*n)
		require.Len(t, batch.Jobs, n)
		seen := map[string]bool{}
		for _, j := range batch.Jobs {
			require.Equal(t, 1, j.Attempts)
			seen[j.ID] = true
		}
		for _, id := range ids {
			require.True(t, seen[id], "job %s retried", id)
		}

		got, err = runtime.NewInspector(b.engine).Failed().RetryAll(b.ctx, "default")
		require.NoError(t, err)
		require.Zero(t, got, "nothing left to retry")
	})
}

func TestFailedForgetAndFlush(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		ids := failInOrder(t, b, "default", 3)
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Live", "")))

		n, err := runtime.NewInspector(b.engine).Failed().Forget(b.ctx, "default", ids[0], "no-such-id")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		_, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, reversed(ids[1:]), failedIDs(t, b, "default"))

		n, err = runtime.NewInspector(b.engine).Failed().Forget(b.ctx, "default", ids[0])
		require.NoError(t, err)
		require.Zero(t, n, "forgetting twice deletes nothing")
		n, err = runtime.NewInspector(b.engine).Failed().Forget(b.ctx, "default")
		require.NoError(t, err)
		require.Zero(t, n)

		require.NoError(t, runtime.NewInspector(b.engine).Failed().Flush(b.ctx, "default"))
		require.Zero(t, failedCount(t, b, "default"))
		require.Empty(t, failedIDs(t, b, "default"))
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "default"), "live jobs survive a flush")
		keys := keysMatching(t, b, b.prefix+":{default}:failed*")
		require.Empty(t, keys)

		require.NoError(t, runtime.NewInspector(b.engine).Failed().Flush(b.ctx, "default"), "flushing an empty store is fine")
	})
}

func TestFailedForgetMany(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const n = 1200 // more than one forget call of 1,000
		ids := failMany(t, b, "default", n)
		n1, err := runtime.NewInspector(b.engine).Failed().Forget(b.ctx, "default", ids...)
		require.NoError(t, err)
		require.Equal(t, int64(n), n1)
		require.Zero(t, failedCount(t, b, "default"))
	})
}

func TestFailedPrune(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		old := failInOrder(t, b, "default", 2)
		time.Sleep(300 * time.Millisecond)
		recent := failOne(t, b, "default", "recent")

		n, err := runtime.NewInspector(b.engine).Failed().Prune(b.ctx, "default", time.Hour)
		require.NoError(t, err)
		require.Zero(t, n, "nothing is an hour old")
		require.Equal(t, int64(3), failedCount(t, b, "default"))

		n, err = runtime.NewInspector(b.engine).Failed().Prune(b.ctx, "default", 150*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, []string{recent}, failedIDs(t, b, "default"))
		for _, id := range old {
			_, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", id)
			require.NoError(t, err)
			require.False(t, ok)
		}

		n, err = runtime.NewInspector(b.engine).Failed().Prune(b.ctx, "empty", time.Millisecond)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestFailedPruneLoops(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const n = 2500 // more than two prune calls of 1,000
		failMany(t, b, "default", n)
		time.Sleep(50 * time.Millisecond)

		got, err := runtime.NewInspector(b.engine).Failed().Prune(b.ctx, "default", time.Hour)
		require.NoError(t, err)
		require.Zero(t, got)

		got, err = runtime.NewInspector(b.engine).Failed().Prune(b.ctx, "default", 20*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, int64(n), got, "one Prune removes every old entry")
		require.Zero(t, failedCount(t, b, "default"))
		keys := keysMatching(t, b, b.prefix+":{default}:failed*")
		require.Empty(t, keys)
	})
}

func TestFailedMaxCount(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{FailedMaxCount: 3}, func(t *testing.T, b bundle) {
		ids := failInOrder(t, b, "default", 5)
		require.Equal(t, int64(3), failedCount(t, b, "default"))
		require.Equal(t, reversed(ids[2:]), failedIDs(t, b, "default"), "the newest three are kept")
		for _, id := range ids[:2] {
			_, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", id)
			require.NoError(t, err)
			require.False(t, ok)
		}
		// The trimmed entries' payloads and records are gone too.
		for _, k := range []string{"failed:payloads", "failed:info"} {
			n, err := b.rdb.HLen(b.ctx, b.prefix+":{default}:"+k).Result()
			require.NoError(t, err)
			require.Equal(t, int64(3), n, k)
		}
	})
}

func TestFailedMaxCountUnlimited(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{FailedMaxCount: -1, FailedMaxAge: -1}, func(t *testing.T, b bundle) {
		failMany(t, b, "default", 20)
		require.Equal(t, int64(20), failedCount(t, b, "default"))
	})
}

func TestFailedMaxAge(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{FailedMaxAge: 200 * time.Millisecond}, func(t *testing.T, b bundle) {
		first := failOne(t, b, "default", "first")
		time.Sleep(300 * time.Millisecond)
		second := failOne(t, b, "default", "second")
		require.Equal(t, []string{second}, failedIDs(t, b, "default"), "the first is trimmed")
		_, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", first)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestFailUndecodedJob(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		raw := []byte{0xc1, 0xff, 0x00, 0x13}
		qk := b.prefix + ":{default}:"
		require.NoError(t, b.rdb.HSet(b.ctx, qk+"payloads", "poison", raw).Err())
		require.NoError(t, b.rdb.RPush(b.ctx, qk+"ready", "poison").Err())

		j := mustReserve(t, b, "default", 1).Jobs[0]
		_, decErr := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
		require.ErrorIs(t, decErr, runtime.ErrDecode)
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: j.Ref, Err: decErr, Attempts: j.Attempts}))

		got, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "default", "poison")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "", got.Name)
		require.Equal(t, raw, got.Payload, "the raw payload is kept")
		require.Equal(t, decErr.Error(), got.Error)
		require.Equal(t, 1, got.Attempts)

		// Retried, it comes back byte for byte.
		done, err := runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", "poison")
		require.NoError(t, err)
		require.Equal(t, []string{"poison"}, done)
		j = mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, raw, j.Payload)
	})
}

func TestRetryAllStopsAtWhatHadFailed(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			return runtime.FailRequest(errors.New("still broken"))
		})
		for i := range 50 {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 4})
		require.Len(t, b.failed(t, "default"), 50)
		time.Sleep(5 * time.Millisecond)

		// A worker fails every retried job again at once while RetryAll runs.
		loops := len(b.log.of(runtime.Looping))
		_, stop := b.start(t, runtime.WorkerConfig{Concurrency: 4})
		eventually(t, func() bool { return len(b.log.of(runtime.Looping)) > loops }, "the worker is running")
		n, err := runtime.NewInspector(b.engine).Failed().RetryAll(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, 50, n, "each job that had failed is retried once")
		stop()
	})
}
