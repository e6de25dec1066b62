package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestClusterFailover runs a producer and a worker on a Redis Cluster of
// three masters with a replica each, of its own, and kills the master of
// the queue's slot with SIGKILL while they work; its replica takes over,
// and the killed node comes back as the new master's replica. With
// EngineConfig.Replication, no dispatch that returned without error is
// lost; without it, dispatches acknowledged just before the kill can be,
// and the test reports how many were.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six servers and fails over; skipped with -short")
	}
	for _, tc := range []struct {
		name string
		repl runtime.ReplicationConfig
	}{
		{"wait", runtime.ReplicationConfig{Replicas: 1, Timeout: 250 * time.Millisecond}},
		{"no wait", runtime.ReplicationConfig{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clusterFailover(t, tc.repl)
			t.Logf("figures (%s): %s", tc.name, f)
			if tc.repl.Replicas > 0 {
				require.Zero(t, f.lost, "acknowledged dispatches lost")
			}
		})
	}
}

// failoverFigures is what one failover run measured.
type failoverFigures struct {
	acked, ackedAfter, refused, notReplicated, lost, again int
	promoted, firstAck, steady                             time.Duration
	workerErrors                                           int64
}

func (f failoverFigures) String() string {
	return strings.Join([]string{
		"dispatches acknowledged " + strconv.Itoa(f.acked) + " (after the kill " + strconv.Itoa(f.ackedAfter) + ")",
		"refused " + strconv.Itoa(f.refused) + " (not replicated " + strconv.Itoa(f.notReplicated) + ")",
		"acknowledged but lost " + strconv.Itoa(f.lost),
		"ran more than once " + strconv.Itoa(f.again),
		"replica promoted " + f.promoted.Round(time.Millisecond).String() + " after the kill",
		"first dispatch acknowledged " + f.firstAck.Round(time.Millisecond).String() + " after it",
		"steady (50 acknowledged after it) in " + f.steady.Round(time.Millisecond).String(),
		"worker errors retried " + strconv.Itoa(int(f.workerErrors)),
	}, "; ")
}

func clusterFailover(t *testing.T, repl runtime.ReplicationConfig) failoverFigures {
	ctx := context.Background()
	nodes := redistest.StartCluster(t, 3, time.Second)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	url := "redis+cluster://" + strings.Join(addrs, ",")
	prefix := redistest.Prefix(t)
	producer, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix, Replication: repl})
	require.NoError(t, err)
	defer producer.Close()
	consumer, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err)
	defer consumer.Close()

	// The node that holds the queue's slot.
	const queue = "failover"
	slotKey := prefix + ":{" + queue + "}:ready"
	cc := producer.Client().(*redis.ClusterClient)
	master, err := cc.MasterForKey(ctx, slotKey)
	require.NoError(t, err)
	var victim *redistest.Server
	for _, n := range nodes {
		if n.Addr == master.Options().Addr {
			victim = n
		}
	}
	require.NotNil(t, victim, "the master of %s is one of the cluster's nodes", slotKey)

	workerErrors := &countingHandler{}
	var mu sync.Mutex
	runs := map[string]int{}
	r := runtime.NewRouter()
	runtime.Register(r, "test.Job", func(ctx context.Context, j testJob) error {
		info, _ := runtime.JobInfoFrom(ctx)
		mu.Lock()
		runs[info.ID]++
		mu.Unlock()
		return nil
	})
	w, err := runtime.NewWorker(consumer, r, runtime.WorkerConfig{
		Queues: []string{queue}, Concurrency: 4, Timeout: time.Second, RetryAfter: 2 * time.Second,
		Sleep: 50 * time.Millisecond, Logger: slog.New(workerErrors),
	})
	require.NoError(t, err)
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	defer func() {
		stopWorker()
		require.NoError(t, <-workerDone)
	}()

	var (
		pmu      sync.Mutex
		acked    []string
		refused  []error
		killedAt time.Time
		fig      failoverFigures
	)
	pctx := runtime.WithDispatcher(ctx, producer)
	stop := make(chan struct{})
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id, err := runtime.Dispatch(pctx, onQueue(i, queue))
			pmu.Lock()
			switch {
			case err != nil:
				refused = append(refused, err)
			default:
				acked = append(acked, id)
				if !killedAt.IsZero() {
					if fig.ackedAfter == 0 {
						fig.firstAck = time.Since(killedAt)
					}
					fig.ackedAfter++
				}
			}
			pmu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()

	time.Sleep(time.Second)
	pmu.Lock()
	killedAt = time.Now()
	pmu.Unlock()
	victim.Stop() // SIGKILL
	require.Eventually(t, func() bool {
		cc.ReloadState(ctx)
		m, err := cc.MasterForKey(ctx, slotKey)
		return err == nil && m.Options().Addr != victim.Addr && m.Ping(ctx).Err() == nil
	}, 30*time.Second, 50*time.Millisecond, "a replica takes over the slot")
	fig.promoted = time.Since(killedAt)
	// The killed node comes back, as the new master's replica.
	victim.Restart(t)
	require.Eventually(t, func() bool {
		pmu.Lock()
		defer pmu.Unlock()
		return fig.ackedAfter >= 50
	}, 60*time.Second, 20*time.Millisecond, "dispatches are acknowledged after the failover")
	fig.steady = time.Since(killedAt)
	close(stop)
	<-producerDone

	pmu.Lock()
	defer pmu.Unlock()
	// Every acknowledged dispatch runs, unless the kill lost it.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s, err := runtime.NewInspector(consumer).Sizes(ctx, queue)
		if err == nil && s.Total() == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range acked {
		switch {
		case runs[id] == 0:
			fig.lost++
		case runs[id] > 1:
			fig.again++
		}
	}
	fig.acked, fig.refused = len(acked), len(refused)
	for _, err := range refused {
		if errors.Is(err, runtime.ErrNotReplicated) {
			fig.notReplicated++
		}
	}
	fig.workerErrors = workerErrors.n.Load()
	return fig
}
