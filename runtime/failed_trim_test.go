package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// By default the failed store keeps every failed job: more than the
// 10,000 per queue it used to trim to.
func TestFailedStoreKeepsMoreThan10000ByDefault(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for range 11 {
			failMany(t, b, "billing", 1000)
		}
		require.Equal(t, int64(11_000), failedCount(t, b, "billing"))
		trims, err := runtime.NewInspector(b.engine).Failed().Trimmed(b.ctx, "billing")
		require.NoError(t, err)
		require.Zero(t, trims[0].Count)
	})
}

// By default the failed store keeps failed jobs older than the 7 days it
// used to trim at. The scripts take their time from Redis's TIME, which
// no test can set (redis-server and miniredis read the system clock), so
// the test ages the record instead: it moves the first job's failed-at
// time (its score in the failed set) 8 days back, as if it had failed
// then, and fails another job, which is when trimming would run.
func TestFailedStoreKeepsOldJobsByDefault(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		old := failOne(t, b, "billing", "card declined")
		eightDaysAgo := time.Now().Add(-8 * 24 * time.Hour).UnixMilli()
		require.NoError(t, b.rdb.ZAddXX(b.ctx, b.prefix+":{billing}:failed", redis.Z{Score: float64(eightDaysAgo), Member: old}).Err())
		recent := failOne(t, b, "billing", "card expired")
		require.Equal(t, []string{recent, old}, failedIDs(t, b, "billing"), "the 8-day-old failure is kept")
		got, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "billing", old)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, eightDaysAgo, got.FailedAt.UnixMilli())
	})
}

// Trimming, when configured, is counted per queue by the script that
// trims, on each path into the failed store: a fail, a recorded failure
// (the Laravel bridge's) and a cancel.
func TestFailedTrimCounted(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{FailedMaxCount: 2}, func(t *testing.T, b bundle) {
		store := runtime.NewInspector(b.engine).Failed()
		trims, err := store.Trimmed(b.ctx, "billing", "mail")
		require.NoError(t, err)
		require.Equal(t, []runtime.FailedTrim{{Queue: "billing"}, {Queue: "mail"}}, trims, "nothing trimmed yet")

		before := time.Now().Add(-time.Minute) // the Redis clock, with room
		failInOrder(t, b, "billing", 3)
		trims, err = store.Trimmed(b.ctx, "billing", "mail")
		require.NoError(t, err)
		require.Equal(t, int64(1), trims[0].Count)
		require.Equal(t, int64(1), trims[0].LastCount)
		require.True(t, trims[0].Last.After(before), "%v", trims[0].Last)
		require.Zero(t, trims[1].Count)

		failMany(t, b, "billing", 5) // one call: 5 dropped at once
		for i := range 2 {
			_, err := store.Record(b.ctx, &runtime.Envelope{ID: fmt.Sprint("laravel-", i), Name: "App\\Jobs\\Charge", Queue: "billing"}, fmt.Errorf("declined"), 3)
			require.NoError(t, err)
		}
		cancelled := env("billing", "app.Job", "to cancel")
		cancelled.ID = "to-cancel"
		require.NoError(t, b.engine.Push(b.ctx, cancelled))
		_, err = runtime.NewInspector(b.engine).Cancel(b.ctx, "billing", "to-cancel", 0)
		require.NoError(t, err)

		trims, err = store.Trimmed(b.ctx, "billing")
		require.NoError(t, err)
		require.Equal(t, int64(1+5+2+1), trims[0].Count, "every failed job dropped is counted")
		require.Equal(t, int64(1), trims[0].LastCount)
		require.Equal(t, int64(2), failedCount(t, b, "billing"))
	})
}

// A partitioned queue's trims are its partitions' together.
func TestFailedTrimCountedPartitioned(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{FailedMaxCount: 1, Partitions: map[string]int{"billing": 3}}, func(t *testing.T, b bundle) {
		for i := range 30 {
			require.NoError(t, b.engine.Push(b.ctx, env("billing", "app.Job", fmt.Sprint(i))))
		}
		failAll(t, b, "billing")
		trims, err := runtime.NewInspector(b.engine).Failed().Trimmed(b.ctx, "billing")
		require.NoError(t, err)
		n := failedCount(t, b, "billing")
		require.Equal(t, int64(30)-n, trims[0].Count)
		require.Greater(t, trims[0].Count, int64(20))
	})
}

// failAll reserves and fails every job of queue, one reserve at a time.
func failAll(t *testing.T, b bundle, queue string) {
	t.Helper()
	br := runtime.NewBroker(b.engine)
	for {
		res, err := br.Reserve(context.Background(), queue, 1, time.Minute)
		require.NoError(t, err)
		if len(res.Jobs) == 0 {
			return
		}
		j := res.Jobs[0]
		require.NoError(t, br.Fail(b.ctx, runtime.Failure{Ref: j.Ref, Name: "app.Job", Err: fmt.Errorf("boom"), Attempts: j.Attempts}))
	}
}
