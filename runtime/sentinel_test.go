package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestSentinelFailover runs a worker and a producer against a master, a
// replica and a sentinel of their own, and forces a failover in the
// middle. The worker follows the new master, errors during the switch
// are retried, and no dispatch that returned without error is lost: the
// producer waits for the replica (EngineConfig.Replication).
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three servers and fails over; skipped with -short")
	}
	t.Parallel() // its servers are its own
	ctx := context.Background()
	const name = "jobgen"
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master.Addr)
	replicaClient := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer replicaClient.Close()
	require.Eventually(t, func() bool {
		info, err := replicaClient.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 10*time.Second, 20*time.Millisecond, "the replica syncs")
	sentinel := redistest.StartSentinel(t, name, master.Addr, 5*time.Second)
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel.Addr})
	defer sc.Close()
	require.Eventually(t, func() bool {
		rs, err := sc.Replicas(ctx, name).Result()
		return err == nil && len(rs) == 1 && !strings.Contains(rs[0]["flags"], "down")
	}, 15*time.Second, 50*time.Millisecond, "the sentinel finds the replica")

	url := "redis+sentinel://" + sentinel.Addr + "/" + name
	prefix := redistest.Prefix(t)
	producer, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix,
		Replication: runtime.ReplicationConfig{Replicas: 1, Timeout: 250 * time.Millisecond}})
	require.NoError(t, err)
	defer producer.Close()
	consumer, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err)
	defer consumer.Close()

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
		Queues: []string{"failover"}, Concurrency: 4, Timeout: time.Second, RetryAfter: 2 * time.Second,
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

	// The producer dispatches until told to stop, and keeps what was
	// acknowledged.
	var (
		pmu        sync.Mutex
		acked      []string
		ackedAfter int // acknowledged after the switch
		refused    []error
		switched   bool
	)
	pctx := runtime.WithDispatcher(ctx, producer)
	stopProducer := make(chan struct{})
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		for i := 0; ; i++ {
			select {
			case <-stopProducer:
				return
			default:
			}
			id, err := runtime.Dispatch(pctx, onQueue(i, "failover"))
			pmu.Lock()
			if err == nil {
				acked = append(acked, id)
				if switched {
					ackedAfter++
				}
			} else {
				refused = append(refused, err)
			}
			pmu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()

	time.Sleep(time.Second)
	start := time.Now()
	require.NoError(t, sc.Failover(ctx, name).Err())
	require.Eventually(t, func() bool {
		addr, err := sc.GetMasterAddrByName(ctx, name).Result()
		return err == nil && addr[0]+":"+addr[1] == replica.Addr
	}, 30*time.Second, 20*time.Millisecond, "the sentinel promotes the replica")
	pmu.Lock()
	switched = true
	pmu.Unlock()
	t.Logf("sentinel switched master after %v", time.Since(start).Round(time.Millisecond))
	// Keep dispatching until pushes are acknowledged by the new master's
	// replica (the old master, once it has synced from the new one).
	require.Eventually(t, func() bool {
		pmu.Lock()
		defer pmu.Unlock()
		return ackedAfter >= 50
	}, 30*time.Second, 20*time.Millisecond, "dispatches are acknowledged after the failover")
	close(stopProducer)
	<-producerDone
	t.Logf("failover to steady state in %v", time.Since(start).Round(time.Millisecond))

	pmu.Lock()
	defer pmu.Unlock()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range acked {
			if runs[id] == 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "every acknowledged dispatch runs")
	require.Eventually(t, func() bool {
		s, err := runtime.NewInspector(consumer).Sizes(ctx, "failover")
		return err == nil && s.Total() == 0
	}, 30*time.Second, 20*time.Millisecond, "the queue drains on the new master")

	mu.Lock()
	defer mu.Unlock()
	lost, again := 0, 0
	for _, id := range acked {
		if runs[id] == 0 {
			lost++
		}
		if runs[id] > 1 {
			again++
		}
	}
	var notReplicated int
	for _, err := range refused {
		if errors.Is(err, runtime.ErrNotReplicated) {
			notReplicated++
		}
	}
	t.Logf("dispatches acknowledged: %d (after the switch: %d); refused: %d (not replicated: %d); ran more than once: %d; acknowledged but lost: %d; worker errors retried: %d; total %v",
		len(acked), ackedAfter, len(refused), notReplicated, again, lost, workerErrors.n.Load(), time.Since(start).Round(time.Millisecond))
	require.Zero(t, lost, "acknowledged dispatches lost")
}

// countingHandler counts the error records of a logger.
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *countingHandler) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
