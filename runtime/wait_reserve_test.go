package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestWaitReserve: the reserve pipelined behind the doorbell's BLPOP runs
// when the BLPOP returns, whether a push rang the doorbell or the wait
// timed out, and takes the jobs for its caller.
func TestWaitReserve(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		queues := []string{"high", "low"}
		if b.backend == "cluster" {
			// Doorbells in different slots cannot share one BLPOP.
			_, _, ok, err := b.engine.WaitReserve(b.ctx, queues, 100*time.Millisecond, 10, time.Minute)
			require.NoError(t, err)
			require.False(t, ok, "nothing is sent")
			queues = queues[:1]
		}
		rang, batch, ok, err := b.engine.WaitReserve(b.ctx, queues, 100*time.Millisecond, 10, time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.Empty(t, rang, "nothing rang")
		require.Empty(t, batch.Jobs)
		require.False(t, batch.Now.IsZero(), "the reserve ran after the timeout")

		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			rang, batch, ok, err = b.engine.WaitReserve(b.ctx, queues, 5*time.Second, 10, time.Minute)
		}()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		require.NoError(t, b.engine.Push(b.ctx, env("high", "app.Job", "1")))
		wg.Wait()
		require.NoError(t, err)
		require.True(t, ok)
		require.Less(t, time.Since(start), 4*time.Second, "woken by the push, not the timeout")
		require.Equal(t, "high", rang)
		require.Len(t, batch.Jobs, 1, "the woken wait took the pushed job")
		require.Equal(t, 1, batch.Jobs[0].Attempts)
		require.Equal(t, runtime.Sizes{Reserved: 1}, sizes(t, b, "high"))
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, batch.Jobs[0].Ref))

		if len(queues) == 1 {
			return
		}
		// A doorbell of a lower queue wakes the wait, which reserves only
		// from the first queue: the caller reserves the rest itself.
		require.NoError(t, b.engine.Push(b.ctx, env("low", "app.Job", "2")))
		rang, batch, _, err = b.engine.WaitReserve(b.ctx, queues, 5*time.Second, 10, time.Minute)
		require.NoError(t, err)
		require.Equal(t, "low", rang)
		require.Empty(t, batch.Jobs)
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "low"))
	})
}

// TestWaitReserveAfterScriptFlush: the pipelined reserve recovers from
// NOSCRIPT, and the jobs it then takes reach the caller.
func TestWaitReserveAfterScriptFlush(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "1")))
		require.NoError(t, b.rdb.ScriptFlush(b.ctx).Err())
		_, batch, ok, err := b.engine.WaitReserve(b.ctx, []string{"default"}, time.Second, 10, time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, batch.Jobs, 1)
		require.Equal(t, runtime.Sizes{Reserved: 1}, sizes(t, b, "default"))
	})
}

// TestUnreserve: jobs given back go to the front of the ready list in
// their order, without the attempt their reserve counted; a stale token
// changes nothing.
func TestUnreserve(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for _, body := range []string{"1", "2", "3"} {
			require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", body)))
		}
		first := mustReserve(t, b, "default", 2).Jobs
		require.Len(t, first, 2)
		require.NoError(t, b.engine.Unreserve(b.ctx, first[0].Ref, first[1].Ref))
		require.Equal(t, runtime.Sizes{Ready: 3}, sizes(t, b, "default"))

		again := mustReserve(t, b, "default", 3).Jobs
		require.Len(t, again, 3)
		for i, j := range again[:2] {
			require.Equal(t, first[i].ID, j.ID, "given back in order, at the front")
			require.Equal(t, 1, j.Attempts, "the reserve given back does not count")
		}
		err := b.engine.Unreserve(b.ctx, first[0].Ref)
		require.ErrorIs(t, err, runtime.ErrLeaseLost, "a stale token is refused")
		require.Equal(t, runtime.Sizes{Reserved: 3}, sizes(t, b, "default"))
	})
}

// TestWaitReserveShortReadTimeout: with a client whose read timeout is
// shorter than the wait asked for, the BLPOP is shortened so that the
// pipeline's replies still arrive, and the jobs of the reserve behind it
// are not left reserved by no one.
func TestWaitReserveShortReadTimeout(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t), ReadTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	e, err := runtime.NewEngine(ctx, rdb, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	start := time.Now()
	_, batch, ok, err := e.WaitReserve(ctx, []string{"default"}, time.Second, 10, time.Minute)
	require.NoError(t, err, "the wait ends before the read timeout")
	require.True(t, ok)
	require.Empty(t, batch.Jobs)
	require.Less(t, time.Since(start), 300*time.Millisecond, "the BLPOP was shortened")
}

// reserveCounter counts, through beforeCalls, the reserve calls sent in
// pipelines with a BLPOP (an idle worker's wait) and without.
type reserveCounter struct {
	mu              sync.Mutex
	waited, reserve int
}

func (h *reserveCounter) count(cmds ...redis.Cmder) {
	blpop := false
	for _, c := range cmds {
		blpop = blpop || strings.EqualFold(fmt.Sprint(c.Args()[0]), "blpop")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cmds {
		if runsScript(c, runtime.ScriptSHA("reserve")) {
			if blpop {
				h.waited++
			} else {
				h.reserve++
			}
		}
	}
}

func (h *reserveCounter) counts() (waited, reserve int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waited, h.reserve
}

// TestIdleWorkerWaitsAgainAfterEmptyingItsQueue: a worker woken with the
// last jobs of its queue waits on the doorbell again at once, rather than
// first reserving from a queue it just emptied, and still picks up every
// job, one round trip after its push.
func TestIdleWorkerWaitsAgainAfterEmptyingItsQueue(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		ran := make(chan int, 1)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			ran <- j.N
			return nil
		})
		_, stop := b.start(t, runtime.WorkerConfig{Concurrency: 4})
		defer stop()
		time.Sleep(50 * time.Millisecond) // idle
		hook := &reserveCounter{}
		b.rdb.AddHook(beforeCalls(hook.count))
		const n = 20
		for i := range n {
			b.dispatch(t, job(i, runtime.JobOptions{}))
			select {
			case got := <-ran:
				require.Equal(t, i, got)
			case <-time.After(5 * time.Second):
				t.Fatalf("job %d did not run", i)
			}
		}
		waited, reserved := hook.counts()
		// The first wait was sent before the hook was added.
		require.GreaterOrEqual(t, waited, n-1, "each job was taken behind a wait")
		require.Zero(t, reserved, "no reserve was sent outside a wait")
	})
}
