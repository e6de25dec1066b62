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
