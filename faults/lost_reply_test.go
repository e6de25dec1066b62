package faults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime/lua"
)

// TestLostReplyFailsNoJobUnrun loses the reply of a worker's reserve for
// good, as the fault runs did: a proxy between Redis (appendfsync
// always) and the worker processes lets a reserve through, and Redis is
// killed with SIGKILL before its reply leaves, so that the call and
// every retry of it fail while Redis is down. The jobs the reserve took
// are in the append-only file. With one try, none of them may end in the
// failed store without its handler having run: the worker gives them
// back, their attempt unused, once Redis is back (docs/faults.md, "A lost
// reply of a reserve"). Before, they waited out their lease and failed
// as "attempt 2 of 1".
func TestLostReplyFailsNoJobUnrun(t *testing.T) {
	rounds := harness.Scale(4, 20)
	b := setup(t, "--appendonly", "yes", "--appendfsync", "always")
	proxy := harness.StartProxy(t, b.redis.Addr(), 0, 0)
	cfg := b.workerConfig(proxy.URL())
	cfg.Tries = 1
	cfg.RetryAfter, cfg.Timeout = 10*time.Second, 5*time.Second
	f := harness.NewFleet(t, cfg)
	f.Start(3)

	ctx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.disp.Stream(ctx, 4*time.Millisecond, func() faultworker.Task { return faultworker.Task{Millis: 5} })
	}()
	sha := []byte(lua.Get("reserve").SHA)
	sprung := 0
	burst := make([]faultworker.Task, 200)
	for i := range burst {
		burst[i] = faultworker.Task{Millis: 20}
	}
	for range rounds {
		time.Sleep(time.Second)
		// A backlog, so that the reserve whose reply is lost takes jobs.
		_, err := b.disp.Push(b.ctx, burst...)
		require.NoError(t, err)
		killed := make(chan struct{})
		proxy.Arm(sha, func() { b.redis.Kill(); close(killed) })
		select {
		case <-killed:
			sprung++
		case <-time.After(10 * time.Second):
			t.Fatal("no reserve went through the proxy within 10s")
		}
		// Longer than go-redis's retries, so that the reserve fails.
		time.Sleep(1500 * time.Millisecond)
		b.redis.Start()
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	harness.Drain(t, b.engine, queue, 2*time.Minute)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	failed, err := harness.FailedIDs(b.ctx, b.engine, queue)
	require.NoError(t, err)
	ran := map[string]bool{}
	for _, r := range f.Records() {
		if r.Kind == 'S' {
			ran[r.ID] = true
		}
	}
	var unrun []string
	for id := range failed {
		if !ran[id] {
			unrun = append(unrun, id)
		}
	}
	t.Logf("figures: %d reserves whose reply was lost with Redis killed; %d dispatches acknowledged, %d refused; lost %d, duplicates %d; failed %d, of which never run %d",
		sprung, o.Acked, len(b.disp.Errors()), len(o.Lost), o.Duplicates, len(failed), len(unrun))
	require.Empty(t, unrun, "jobs in the failed store whose handler never ran")
	require.Empty(t, f.Deaths())
}
