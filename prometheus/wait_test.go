package jobprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// A queue with a ready job reports how long its oldest has waited, the
// figure queue:monitor --max-wait alerts on; an empty queue reports
// nothing.
func TestQueueCollectorReportsTheOldestWait(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		_, err := runtime.Dispatch(b.ctx, step{N: 1, opts: runtime.JobOptions{Queue: "slow"}})
		require.NoError(t, err)
		_, err = runtime.Dispatch(b.ctx, step{N: 2, opts: runtime.JobOptions{Queue: "idle", Delay: time.Hour}})
		require.NoError(t, err)
		time.Sleep(1100 * time.Millisecond)
		c := jobprom.NewQueueCollector(b.engine, []string{"slow", "idle"})
		require.Equal(t, 1, testutil.CollectAndCount(c, "jobgen_queue_oldest_wait_seconds"), "only the queue with a ready job")
		require.GreaterOrEqual(t, gauge(t, c, "jobgen_queue_oldest_wait_seconds"), 1.0)
	})
}
