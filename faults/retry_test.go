package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/runtime/lua"
)

// A Redis client retries a command whose connection broke before the
// reply came (go-redis does, up to MaxRetries times, by default). When
// Redis had run the command, it runs again. These tests lose exactly one
// reply through a proxy and show what the second run does.

// TestRetriedPush loses the reply to a push. The retry must neither
// queue the job a second time (when it has already run) nor report a
// failure for a job that was queued.
func TestRetriedPush(t *testing.T) {
	t.Parallel()
	srv := harness.StartRedis(t)
	proxy := harness.StartProxy(t, srv.Addr(), 0, 0)
	b := setupOn(t, srv, proxy.URL())
	direct := setupOn(t, srv, srv.URL())
	newEnv := func(q string) *runtime.Envelope {
		env, err := runtime.NewPendingDispatch(faultworker.Task{}).OnQueue(q).Envelope()
		require.NoError(t, err)
		return env
	}
	sizesOf := func(q string) runtime.Sizes {
		s, err := runtime.NewInspector(direct.engine).Sizes(b.ctx, q)
		require.NoError(t, err)
		return s
	}

	t.Run("the job is still queued", func(t *testing.T) {
		env := newEnv("queued")
		proxy.Arm([]byte(env.ID), nil)
		require.NoError(t, b.engine.Push(b.ctx, env), "a queued job's push succeeds")
		require.Equal(t, runtime.Sizes{Ready: 1}, sizesOf("queued"))
	})
	t.Run("the job ran before the retry", func(t *testing.T) {
		env := newEnv("ran")
		proxy.Arm([]byte(env.ID), func() {
			// A fast worker takes the job and finishes it.
			batch, err := runtime.NewBroker(direct.engine).Reserve(b.ctx, "ran", 1, time.Minute)
			require.NoError(t, err)
			require.Len(t, batch.Jobs, 1)
			require.NoError(t, runtime.NewBroker(direct.engine).Ack(b.ctx, batch.Jobs[0].Ref))
		})
		require.NoError(t, b.engine.Push(b.ctx, env))
		require.Equal(t, runtime.Sizes{}, sizesOf("ran"), "the finished job is not queued again")
	})
}

// TestRetriedReserve loses the reply to a reserve. The retry must not
// leave jobs reserved that no worker was given: such a job waits out
// its lease and comes back with an attempt it never had, and a job with
// one try then fails without ever running.
func TestRetriedReserve(t *testing.T) {
	t.Parallel()
	reserveSHA := lua.Get("reserve").SHA
	srv := harness.StartRedis(t)
	proxy := harness.StartProxy(t, srv.Addr(), 0, 0)
	b := setupOn(t, srv, proxy.URL())
	direct := setupOn(t, srv, srv.URL())
	_, err := direct.disp.Push(b.ctx, faultworker.Task{}, faultworker.Task{})
	require.NoError(t, err)

	proxy.Arm([]byte(reserveSHA), nil)
	batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, 1, time.Minute)
	require.NoError(t, err)
	s := sizes(t, direct)
	require.Equal(t, int64(len(batch.Jobs)), s.Reserved, "every reserved job was handed to the caller: %+v", s)
}
