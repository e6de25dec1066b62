package runtime_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// Redis does not undo the writes of a script that fails half-way, so a
// push that fails must fail before it writes anything: a payload left
// behind would make the push of the same envelope again, by the caller
// or by the group commit answering each push of a refused shared call,
// look like a retry of a push that landed, and return nil for a job that
// is in no list.

// TestPushToWrongTypedKeyPushesNothing pushes, alone and concurrently,
// to a queue one of whose keys holds a string. Every push fails with an
// error naming the key, writes nothing, and once the key is mended the
// same envelopes pushed again are queued, each once.
func TestPushToWrongTypedKeyPushesNothing(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for _, tc := range []struct {
			key   string
			delay time.Duration
		}{
			{"ready", 0}, {"notify", 0}, {"payloads", 0},
			{"delayed", time.Hour}, {"notify", time.Hour}, {"payloads", time.Hour},
		} {
			t.Run(fmt.Sprint(tc.key, " ", tc.delay), func(t *testing.T) {
				q := fmt.Sprintf("wrong-%s-%d", tc.key, tc.delay/time.Second)
				pushToWrongTypedKey(t, b, q, tc.key, tc.delay)
			})
		}
	})
}

func pushToWrongTypedKey(t *testing.T, b bundle, q, wrong string, delay time.Duration) {
	key := b.prefix + ":{" + q + "}:" + wrong
	payloads := b.prefix + ":{" + q + "}:payloads"
	require.NoError(t, b.rdb.Set(b.ctx, key, "not a "+wrong, 0).Err())

	// Alone, twice: the second push of the envelope finds nothing of the
	// first.
	alone := env(q, "app.Job", "alone")
	for i := range 2 {
		err := b.engine.Later(b.ctx, alone, delay)
		require.Error(t, err, "push %d of the same envelope", i+1)
		require.ErrorContains(t, err, key, "the error names the key")
		require.ErrorContains(t, err, "string")
	}

	// Concurrently: pushes share calls, and a refused call's pushes go
	// again one call each. Half are dispatches of a job, half pushes of
	// an envelope, which are pushed again below.
	const n = 200
	var envs []*runtime.Envelope
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		if i%2 == 0 {
			wg.Go(func() {
				_, errs[i] = b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(testJob{N: i}).OnQueue(q).Delay(delay))
			})
			continue
		}
		e := env(q, "app.Job", fmt.Sprint(i))
		envs = append(envs, e)
		wg.Go(func() { errs[i] = b.engine.Later(b.ctx, e, delay) })
	}
	wg.Wait()
	for i, err := range errs {
		require.Error(t, err, "dispatch %d returned nil", i)
		require.ErrorContains(t, err, key)
	}
	if wrong != "payloads" {
		n, err := b.rdb.HLen(b.ctx, payloads).Result()
		require.NoError(t, err)
		require.Zero(t, n, "no payload is left behind")
	}

	// Mended, the same envelopes go through, and each is queued.
	require.NoError(t, b.rdb.Del(b.ctx, key).Err())
	require.Equal(t, runtime.Sizes{}, sizes(t, b, q), "nothing was queued")
	envs = append(envs, alone)
	errs = make([]error, len(envs))
	for i, e := range envs {
		wg.Go(func() { errs[i] = b.engine.Later(b.ctx, e, delay) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "push %d again", i)
	}
	s := sizes(t, b, q)
	if delay > 0 {
		require.Equal(t, runtime.Sizes{Delayed: int64(len(envs))}, s, "every envelope pushed again is queued")
		return
	}
	require.Equal(t, runtime.Sizes{Ready: int64(len(envs))}, s, "every envelope pushed again is queued")
	got := map[string]int{}
	for _, id := range readyIDs(t, b, q) {
		got[id]++
	}
	for _, e := range envs {
		require.Equal(t, 1, got[e.ID], "job %s", e.ID)
	}
}
