package jobprom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// TestQueueCollectorReportsLimits: a queue with flow limits reports
// them, its running jobs and how often each held a reserve back; a queue
// without reports none of it.
func TestQueueCollectorReportsLimits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		in := runtime.NewInspector(b.engine)
		for n := range 3 {
			_, err := runtime.Dispatch(b.ctx, step{N: n, opts: runtime.JobOptions{Queue: "api"}})
			require.NoError(t, err)
		}
		_, err := runtime.Dispatch(b.ctx, step{N: 9})
		require.NoError(t, err)
		require.NoError(t, in.SetQueueLimit(b.ctx, "api", 1))
		require.NoError(t, in.SetQueueRate(b.ctx, "api", 10, 2*time.Second))
		for range 2 {
			_, err = runtime.NewBroker(b.engine).Reserve(b.ctx, "api", 5, time.Minute)
			require.NoError(t, err)
		}
		want := `
# HELP jobgen_queue_limit The most jobs of a queue under lease at once (its concurrency limit); 0 for none.
# TYPE jobgen_queue_limit gauge
jobgen_queue_limit{queue="api"} 1
# HELP jobgen_queue_running Jobs of a queue under lease now, running or prefetched: what its concurrency limit caps.
# TYPE jobgen_queue_running gauge
jobgen_queue_running{queue="api"} 1
# HELP jobgen_queue_rate_limit The most jobs of a queue started per window (its rate); 0 for none.
# TYPE jobgen_queue_rate_limit gauge
jobgen_queue_rate_limit{queue="api"} 10
# HELP jobgen_queue_rate_window_seconds The window of a queue's rate.
# TYPE jobgen_queue_rate_window_seconds gauge
jobgen_queue_rate_window_seconds{queue="api"} 2
# HELP jobgen_queue_throttled_total Reserves a queue's limit (by=limit) or rate (by=rate) held back while its jobs were ready.
# TYPE jobgen_queue_throttled_total counter
jobgen_queue_throttled_total{by="limit",queue="api"} 2
jobgen_queue_throttled_total{by="rate",queue="api"} 0
`
		require.NoError(t, testutil.CollectAndCompare(jobprom.NewQueueCollector(b.engine, nil), strings.NewReader(want),
			"jobgen_queue_limit", "jobgen_queue_running", "jobgen_queue_rate_limit", "jobgen_queue_rate_window_seconds", "jobgen_queue_throttled_total"))
	})
}

// TestQueueCollectorReportsGroups: a queue with grouped jobs reports the
// jobs waiting in groups, the groups on the ring and the slots held; a
// queue without reports none of it.
func TestQueueCollectorReportsGroups(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		var jobs []runtime.Outgoing
		for i, g := range []string{"a", "a", "a", "b"} {
			env := &runtime.Envelope{Name: "app.Job", Queue: "tenants", Body: []byte{byte(i)},
				Headers: map[string]string{runtime.GroupHeader: g, runtime.GroupLimitHeader: "1"}}
			jobs = append(jobs, runtime.Outgoing{Envelope: env})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, jobs))
		_, err := runtime.Dispatch(b.ctx, step{N: 9})
		require.NoError(t, err)
		res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "tenants", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1)
		want := `
# HELP jobgen_queue_group_running Jobs of a queue holding a slot of their group's concurrency limit.
# TYPE jobgen_queue_group_running gauge
jobgen_queue_group_running{queue="tenants"} 1
# HELP jobgen_queue_group_turns Fair groups of a queue on its ring of turns: with waiting jobs and below their limit.
# TYPE jobgen_queue_group_turns gauge
jobgen_queue_group_turns{queue="tenants"} 1
# HELP jobgen_queue_group_waiting Jobs of a queue waiting in fair groups for their group's turn.
# TYPE jobgen_queue_group_waiting gauge
jobgen_queue_group_waiting{queue="tenants"} 3
`
		require.NoError(t, testutil.CollectAndCompare(jobprom.NewQueueCollector(b.engine, nil), strings.NewReader(want),
			"jobgen_queue_group_waiting", "jobgen_queue_group_turns", "jobgen_queue_group_running"))
	})
}
