package runtime_test

import (
	"context"
	"errors"
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

// The tests here need the cluster itself; the rest of the suite runs on
// it through forEachBackend.

func clusterBundle(t *testing.T) bundle {
	t.Helper()
	addrs := redistest.ClusterAddrs()
	if len(addrs) == 0 {
		t.Skipf("no cluster: set %s (scripts/test does)", redistest.ClusterEnv)
	}
	return setup(t, redistest.Backend{Name: "cluster", URL: "redis+cluster://" + strings.Join(addrs, ",")}, runtime.EngineConfig{})
}

// queuesOnDistinctMasters returns n queue names whose slots live on n
// different masters.
func queuesOnDistinctMasters(t *testing.T, b bundle, n int) []string {
	t.Helper()
	cc := b.rdb.(*redis.ClusterClient)
	seen := map[string]bool{}
	var qs []string
	for i := 0; len(qs) < n && i < 1000; i++ {
		q := fmt.Sprintf("q%d", i)
		node, err := cc.MasterForKey(b.ctx, b.prefix+":{"+q+"}:ready")
		require.NoError(t, err)
		if addr := node.Options().Addr; !seen[addr] {
			seen[addr] = true
			qs = append(qs, q)
		}
	}
	require.Len(t, qs, n, "the cluster has fewer than %d masters", n)
	return qs
}

func TestClusterAcrossMasters(t *testing.T) {
	b := clusterBundle(t)
	t.Parallel()
	qs := queuesOnDistinctMasters(t, b, 3)

	// One bulk push to three masters, some of it delayed.
	var out []runtime.Outgoing
	for i := range 30 {
		var d time.Duration
		if (i/3)%5 < 2 {
			d = time.Hour
		}
		out = append(out, runtime.Outgoing{Envelope: env(qs[i%3], "app.Job", fmt.Sprint(i)), Delay: d})
	}
	require.NoError(t, b.engine.PushMany(b.ctx, out))
	for _, q := range qs {
		require.Equal(t, runtime.Sizes{Ready: 6, Delayed: 4}, sizes(t, b, q))
	}
	listed, err := runtime.NewInspector(b.engine).Queues(b.ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, qs, listed)

	// Ack and fail jobs of all three queues in one call each.
	var refs []runtime.Ref
	var failures []runtime.Failure
	for _, q := range qs {
		jobs := mustReserve(t, b, q, 10).Jobs
		require.Len(t, jobs, 6)
		refs = append(refs, jobs[0].Ref, jobs[1].Ref)
		for _, j := range jobs[2:] {
			failures = append(failures, runtime.Failure{Ref: j.Ref, Err: errors.New("boom")})
		}
	}
	require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, refs...))
	require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, failures...))
	for _, q := range qs {
		require.Equal(t, runtime.Sizes{Delayed: 4, Failed: 4}, sizes(t, b, q))
		n, err := runtime.NewInspector(b.engine).Failed().RetryAll(b.ctx, q)
		require.NoError(t, err)
		require.Equal(t, 4, n)
		require.Equal(t, runtime.Sizes{Ready: 4, Delayed: 4}, sizes(t, b, q))
	}
}

func TestClusterChainAcrossMasters(t *testing.T) {
	b := clusterBundle(t)
	t.Parallel()
	qs := queuesOnDistinctMasters(t, b, 3)
	r := runtime.NewRouter()
	var mu sync.Mutex
	var seen []string
	runtime.Register(r, "test.Job", func(ctx context.Context, j testJob) error {
		info, _ := runtime.JobInfoFrom(ctx)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%d@%s", j.N, info.Queue))
		mu.Unlock()
		return nil
	})
	ctx := runtime.WithDispatcher(b.ctx, b.engine)
	_, err := runtime.NewPendingDispatch(onQueue(1, qs[0])).WithChain(onQueue(2, qs[1]), onQueue(3, qs[2])).Dispatch(ctx)
	require.NoError(t, err)
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: qs, Logger: quiet, Sleep: 50 * time.Millisecond})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 3
	}, "the chain runs link by link across three masters")
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, []string{"1@" + qs[0], "2@" + qs[1], "3@" + qs[2]}, seen)
	for _, q := range qs {
		require.Equal(t, runtime.Sizes{}, sizes(t, b, q))
	}
}

func TestClusterWaitOnManyQueues(t *testing.T) {
	b := clusterBundle(t)
	t.Parallel()
	qs := queuesOnDistinctMasters(t, b, 3)

	// A push to the last queue wakes a waiter blocked on all three.
	for _, q := range qs {
		got, err := runtime.NewBroker(b.engine).Wait(b.ctx, qs, 50*time.Millisecond)
		require.NoError(t, err)
		require.Empty(t, got)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(100 * time.Millisecond)
			assertNoErr(t, b.engine.Push(b.ctx, env(q, "app.Job", "")))
		}()
		start := time.Now()
		got, err = runtime.NewBroker(b.engine).Wait(b.ctx, qs, 5*time.Second)
		wg.Wait()
		require.NoError(t, err)
		require.Equal(t, q, got)
		require.Less(t, time.Since(start), 3*time.Second, "woken by the push, not the timeout")
	}

	// Doorbells that rang before the wait are taken one at a time, in
	// queue order, and none is lost.
	for _, q := range qs {
		require.NoError(t, b.engine.Push(b.ctx, env(q, "app.Job", "")))
	}
	for _, q := range qs {
		got, err := runtime.NewBroker(b.engine).Wait(b.ctx, qs, time.Second)
		require.NoError(t, err)
		require.Equal(t, q, got)
	}
	got, err := runtime.NewBroker(b.engine).Wait(b.ctx, qs, 50*time.Millisecond)
	require.NoError(t, err)
	require.Empty(t, got)

	// A cancelled context ends the wait early.
	ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = runtime.NewBroker(b.engine).Wait(ctx, qs, 5*time.Second)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 3*time.Second)
}

// assertNoErr is require.NoError for goroutines other than the test's.
func assertNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}
