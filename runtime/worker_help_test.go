package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// reservesInFlight is a go-redis hook that holds every reserve call for
// hold before sending it and records how many were out at once.
type reservesInFlight struct {
	hold time.Duration

	mu       sync.Mutex
	out, max int
}

func (h *reservesInFlight) reserves(cmds []redis.Cmder) int {
	n := 0
	for _, c := range cmds {
		if runsScript(c, runtime.ScriptSHA("reserve")) {
			n++
		}
	}
	return n
}

func (h *reservesInFlight) around(cmds []redis.Cmder, send func() error) error {
	if h.reserves(cmds) == 0 {
		return send()
	}
	h.mu.Lock()
	h.out++
	h.max = max(h.max, h.out)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.out--
		h.mu.Unlock()
	}()
	time.Sleep(h.hold)
	return send()
}

func (h *reservesInFlight) most() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.max
}

func (h *reservesInFlight) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *reservesInFlight) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return h.around([]redis.Cmder{cmd}, func() error { return next(ctx, cmd) })
	}
}

func (h *reservesInFlight) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		return h.around(cmds, func() error { return next(ctx, cmds) })
	}
}

// TestBusyWorkerKeepsTwoReservesInFlight: while its queue is busy, a
// worker reserves for the slots that free up while a reserve is out,
// rather than wait for it; it never has more than two out, nor more jobs
// than its slots, and every job runs once.
func TestBusyWorkerKeepsTwoReservesInFlight(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		const n, concurrency = 150, 8
		var mu sync.Mutex
		ran := map[int]int{}
		running, most := 0, 0
		done := make(chan struct{})
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(time.Duration(j.N%4) * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			running--
			ran[j.N]++
			if len(ran) == n {
				close(done)
			}
			return nil
		})
		for i := range n {
			b.dispatch(t, job(i, runtime.JobOptions{}))
		}
		hook := &reservesInFlight{hold: 10 * time.Millisecond}
		b.rdb.AddHook(hook)
		_, stop := b.start(t, runtime.WorkerConfig{Concurrency: concurrency})
		defer stop()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("not every job ran")
		}
		stop()
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			require.Equal(t, 1, ran[i], "job %d", i)
		}
		require.LessOrEqual(t, most, concurrency, "jobs running at once")
		require.Equal(t, 2, hook.most(), "reserves in flight at once")
	})
}
