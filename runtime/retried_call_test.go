package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// replayScripts is a go-redis hook that runs the first call of one script
// twice, as the Redis client does when the connection breaks after Redis
// ran a command and before its reply came: the first reply is lost, the
// second is the caller's. A pipeline holding the call is run twice whole,
// as go-redis retries it. between, if set, runs between the two.
type replayScripts struct {
	sha     string
	between func()
	mu      sync.Mutex
	n       int
}

// replays counts the calls run twice so far.
func (h *replayScripts) replays() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func (h *replayScripts) take(cmds ...redis.Cmder) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n > 0 {
		return false
	}
	for _, c := range cmds {
		if runsScript(c, h.sha) {
			h.n++
			return true
		}
	}
	return false
}

func (h *replayScripts) twice(run func() error) error {
	_ = run()
	if h.between != nil {
		h.between()
	}
	return run()
}

func (h *replayScripts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *replayScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.take(cmd) {
			return next(ctx, cmd)
		}
		return h.twice(func() error { return next(ctx, cmd) })
	}
}

func (h *replayScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.take(cmds...) {
			return next(ctx, cmds)
		}
		return h.twice(func() error { return next(ctx, cmds) })
	}
}

func TestRetriedReserveHandsBackItsJobs(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var ids []string
		for i := range 3 {
			e := env("default", "app.Job", fmt.Sprint(i))
			require.NoError(t, b.engine.Push(b.ctx, e))
			ids = append(ids, e.ID)
		}
		hook := &replayScripts{sha: runtime.ScriptSHA("reserve")}
		b.rdb.AddHook(hook)
		batch := mustReserve(t, b, "default", 2)
		require.Equal(t, 1, hook.replays())

		got := make([]string, len(batch.Jobs))
		for i, j := range batch.Jobs {
			got[i] = j.ID
			require.Equal(t, 1, j.Attempts, "the retry is not an attempt")
			require.WithinDuration(t, batch.Now.Add(time.Minute), j.LeaseUntil, time.Second)
		}
		require.ElementsMatch(t, ids[:2], got, "the retry hands back the jobs the lost reply held")
		require.Equal(t, runtime.Sizes{Ready: 1, Reserved: 2}, sizes(t, b, "default"))

		// The call is recorded, with its deadline, for RetryWindow.
		keys := keysMatching(t, b, b.prefix+":calls:{default}:*")
		require.NotEmpty(t, keys)
		var recorded bool
		for _, k := range keys {
			dl, err := b.rdb.HGet(b.ctx, k, batch.Jobs[0].Token).Int64()
			if err == redis.Nil {
				continue
			}
			require.NoError(t, err)
			require.Equal(t, batch.Jobs[0].LeaseUntil.UnixMilli(), dl)
			ttl, err := b.rdb.PTTL(b.ctx, k).Result()
			require.NoError(t, err)
			// The window and the 5 s span the hash covers.
			require.Greater(t, ttl, 55*time.Second)
			require.LessOrEqual(t, ttl, time.Minute+5*time.Second)
			recorded = true
		}
		require.True(t, recorded)

		refs := []runtime.Ref{batch.Jobs[0].Ref, batch.Jobs[1].Ref}
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, refs...))
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "default"))
	})
}

func TestRetriedCallsWithWindowOff(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{RetryWindow: -1}, func(t *testing.T, b bundle) {
		for i := range 4 {
			require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", fmt.Sprint(i))))
		}
		b.rdb.AddHook(&replayScripts{sha: runtime.ScriptSHA("reserve")})
		batch := mustReserve(t, b, "default", 2)
		require.Len(t, batch.Jobs, 2)
		require.Equal(t, runtime.Sizes{Reserved: 4}, sizes(t, b, "default"),
			"with no record of the call, the retry takes more jobs")
		require.Empty(t, keysMatching(t, b, b.prefix+":calls:{default}:*"))
	})
}

func TestRetriedReserveOfAPausedQueue(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		hook := &replayScripts{sha: runtime.ScriptSHA("reserve"), between: func() {
			require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "default"))
		}}
		b.rdb.AddHook(hook)
		batch := mustReserve(t, b, "default", 5)
		require.Len(t, batch.Jobs, 1, "a queue paused after the first run still hands back its jobs")
		require.Equal(t, runtime.Sizes{Reserved: 1}, sizes(t, b, "default"))
	})
}

func TestRetriedPushAfterTheJobRan(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		hook := &replayScripts{sha: runtime.ScriptSHA("push"), between: func() {
			batch := mustReserve(t, b, "default", 10)
			require.Len(t, batch.Jobs, 1)
			require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, batch.Jobs[0].Ref))
		}}
		b.rdb.AddHook(hook)
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		require.Equal(t, 1, hook.replays())
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "default"), "the finished job is not queued again")

		// The record of the call, its 12-byte nonce, lasts RetryWindow
		// (beside the token of the reserve that took the job, in the same
		// hash or the next tick's).
		keys := keysMatching(t, b, b.prefix+":calls:{default}:*")
		require.NotEmpty(t, keys)
		var pushes []string
		for _, k := range keys {
			record, err := b.rdb.HGetAll(b.ctx, k).Result()
			require.NoError(t, err)
			for field, v := range record {
				if v != "1" {
					continue
				}
				pushes = append(pushes, field)
				ttl, err := b.rdb.PTTL(b.ctx, k).Result()
				require.NoError(t, err)
				// The window and the 5 s span the hash covers.
				require.Greater(t, ttl, 55*time.Second)
				require.LessOrEqual(t, ttl, time.Minute+5*time.Second)
			}
		}
		require.Len(t, pushes, 1)
		require.Len(t, pushes[0], 12)
	})
}

func TestRetriedPushManyAfterTheJobsRan(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		// Two queues, so two script calls in one pipeline, sent again whole.
		hook := &replayScripts{sha: runtime.ScriptSHA("push"), between: func() {
			for _, q := range []string{"a", "b"} {
				batch := mustReserve(t, b, q, 10)
				require.Len(t, batch.Jobs, 2)
				require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, batch.Jobs[0].Ref, batch.Jobs[1].Ref))
			}
		}}
		b.rdb.AddHook(hook)
		var out []runtime.Outgoing
		for i := range 4 {
			out = append(out, runtime.Outgoing{Envelope: env([]string{"a", "b"}[i%2], "app.Job", fmt.Sprint(i))})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		require.Equal(t, 1, hook.replays())
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "a"))
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "b"))
	})
}

func TestRetriedLaterAfterTheJobWentAway(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		hook := &replayScripts{sha: runtime.ScriptSHA("push"), between: func() {
			n, err := runtime.NewInspector(b.engine).ClearQueue(b.ctx, "default")
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		}}
		b.rdb.AddHook(hook)
		require.NoError(t, b.engine.Later(b.ctx, env("default", "app.Job", ""), time.Hour))
		require.Equal(t, 1, hook.replays())
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "default"), "the cleared job is not added again")
	})
}

func TestRetriedReserveAfterTheLease(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{MigrateLimit: 1}, func(t *testing.T, b bundle) {
		for i := range 3 {
			require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", fmt.Sprint(i))))
		}
		// The retry comes after the lease, and the migrate before it
		// moves only one of the two expired jobs back.
		b.rdb.AddHook(&replayScripts{sha: runtime.ScriptSHA("reserve"), between: func() { time.Sleep(150 * time.Millisecond) }})
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "default", 2, 100*time.Millisecond)
		require.NoError(t, err)
		require.Empty(t, batch.Jobs, "jobs whose lease has run out are not handed back")
		require.Equal(t, runtime.Sizes{Ready: 2, Reserved: 1}, sizes(t, b, "default"))
		_, err = runtime.NewBroker(b.engine).Migrate(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, runtime.Sizes{Ready: 3}, sizes(t, b, "default"))
	})
}

// TestRetriedBatchAdd: a batch create or add that the Redis client sends
// again after losing its reply counts its jobs once, and the create is
// not refused as a batch that exists already.
func TestRetriedBatchAdd(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		create := &replayScripts{sha: runtime.ScriptSHA("batch_add")}
		b.rdb.AddHook(create)
		id, err := runtime.NewBatch(itemJob{N: 1}, itemJob{N: 2}).Dispatch(runtime.WithDispatcher(b.ctx, b.engine))
		require.NoError(t, err, "the create made again is not refused")
		require.Equal(t, 1, create.replays())

		add := &replayScripts{sha: runtime.ScriptSHA("batch_add")}
		b.rdb.AddHook(add)
		require.NoError(t, runtime.NewInspector(b.engine).Batches().Add(b.ctx, id, itemJob{N: 3}))
		require.Equal(t, 1, add.replays())

		s, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 3, s.Total, "each job counted once")
		require.Equal(t, 3, s.Pending)
	})
}

// TestRetriedExceptionCount: an exception that ThrottlesExceptions counts
// with a call the Redis client sends again after losing its reply counts
// once, so the throttle does not open before maxExceptions.
func TestRetriedExceptionCount(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var runs int
		r := runtime.NewRouter()
		runtime.Register(r, "test.Middleware", func(ctx context.Context, j mwJob) error {
			runs++
			return errors.New("service down")
		})
		ctx := runtime.WithRouter(runtime.WithDispatcher(b.ctx, b.engine), r)
		job := mwJob{Mode: "throttle", Key: t.Name(), Limit: 2, PerMs: 60_000}

		hook := &replayScripts{sha: runtime.ScriptSHA("hits")}
		b.rdb.AddHook(hook)
		require.Error(t, runtime.DispatchSync(ctx, job))
		require.Equal(t, 1, hook.replays())
		require.Equal(t, 1, runs)

		require.Error(t, runtime.DispatchSync(ctx, job))
		require.Equal(t, 2, runs, "one exception counted: the throttle is still closed")
		require.Error(t, runtime.DispatchSync(ctx, job))
		require.Equal(t, 2, runs, "two counted: the throttle is open")
	})
}

// TestPushCallsRecordTheirOwnNonces: every push and later call records a
// nonce of its own, 12 bytes, so no call is taken for a retry of another
// and every job is queued.
func TestPushCallsRecordTheirOwnNonces(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const n = 50
		for i := range n {
			require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", fmt.Sprint(i))))
			require.NoError(t, b.engine.Later(b.ctx, env("default", "app.Job", fmt.Sprint(i)), time.Hour))
		}
		require.Equal(t, runtime.Sizes{Ready: n, Delayed: n}, sizes(t, b, "default"))
		nonces := map[string]bool{}
		for _, k := range keysMatching(t, b, b.prefix+":calls:{default}:*") {
			fields, err := b.rdb.HKeys(b.ctx, k).Result()
			require.NoError(t, err)
			for _, f := range fields {
				require.Len(t, f, 12)
				nonces[f] = true
			}
		}
		require.Len(t, nonces, 2*n, "one nonce per call, none twice")
	})
}
