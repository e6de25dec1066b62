package faults_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestBacklog makes 200,000 delayed jobs (20,000 in CI) fall due in the
// same instant as 200,000 expired reservations, then lets workers move
// them back to ready (the queue is paused, so they only migrate). Moves
// are bounded per script call, so no script runs for 50 ms or more, and
// every job is ready within 60 s.
//
// The set-up takes as long as the machine makes it: the jobs are pushed
// delayed and reserved for an hour, and then, in one transaction, every
// due time and lease deadline is set to the same instant long past
// (ZUNIONSTORE with weight 0), so that they all fall due at once however
// long the pushes took.
func TestBacklog(t *testing.T) {
	n := harness.Scale(20_000, 200_000)
	b := setup(t, "--slowlog-log-slower-than", "5000", "--slowlog-max-len", "10000")
	rdb := b.redis.Client()
	qk := harness.Keys("faults", queue)

	task := func(int) faultworker.Task { return faultworker.Task{} }
	for start := 0; start < n; start += 500 {
		var out []runtime.Outgoing
		for i := start; i < min(n, start+500); i++ {
			env, err := runtime.NewPendingDispatch(task(i)).OnQueue(queue).Envelope()
			require.NoError(t, err)
			out = append(out, runtime.Outgoing{Envelope: env, Delay: time.Hour})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
	}
	b.disp.PushN(b.ctx, n, task)
	for reserved := 0; reserved < n; {
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, 1000, time.Hour)
		require.NoError(t, err)
		require.NotEmpty(t, batch.Jobs)
		reserved += len(batch.Jobs)
	}
	s := sizes(t, b)
	require.Equal(t, runtime.Sizes{Delayed: int64(n), Reserved: int64(n)}, s)

	require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, queue))
	f := b.fleet(t, nil)
	f.Start(2)
	require.NoError(t, rdb.SlowLogReset(b.ctx).Err())
	_, err := rdb.TxPipelined(b.ctx, func(p redis.Pipeliner) error {
		p.ZUnionStore(b.ctx, qk.Delayed, &redis.ZStore{Keys: []string{qk.Delayed}, Weights: []float64{0}})
		p.ZUnionStore(b.ctx, qk.Reserved, &redis.ZStore{Keys: []string{qk.Reserved}, Weights: []float64{0}})
		return nil
	})
	require.NoError(t, err)
	due := time.Now()
	var took time.Duration
	for {
		s = sizes(t, b)
		took = time.Since(due)
		if s.Ready == int64(2*n) {
			break
		}
		require.Less(t, took, 60*time.Second, "all jobs ready within 60s of falling due: %+v", s)
		time.Sleep(10 * time.Millisecond)
	}
	slow, err := rdb.SlowLogGet(b.ctx, -1).Result()
	require.NoError(t, err)
	var ds []time.Duration
	var worstCmd string
	for _, e := range slow {
		cmd := strings.ToLower(e.Args[0])
		if cmd == "evalsha" || cmd == "eval" || cmd == "fcall" {
			ds = append(ds, e.Duration)
			if e.Duration >= slices.Max(ds) {
				worstCmd = strings.Join(e.Args[:min(len(e.Args), 3)], " ")
			}
		}
	}
	f.StopAll(15 * time.Second)
	slices.Sort(ds)
	worst, p90 := time.Duration(0), time.Duration(0)
	if len(ds) > 0 {
		worst, p90 = ds[len(ds)-1], ds[len(ds)*9/10]
	}
	t.Logf("figures: %d delayed + %d expired jobs all ready %v after falling due; slowest script %v (%s), 90th percentile of the slow ones %v; %d calls over 5ms",
		n, n, took.Round(10*time.Millisecond), worst, worstCmd, p90, len(ds))
	if harness.Long {
		require.Less(t, worst, 50*time.Millisecond)
		return
	}
	// SLOWLOG times are wall-clock: on a shared CI machine a script can
	// lose the CPU mid-call. CI allows a few such outliers; the long run
	// holds every call to 50ms.
	require.Less(t, p90, 50*time.Millisecond)
	require.Less(t, worst, 250*time.Millisecond)
}
