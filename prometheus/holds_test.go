package jobprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// A held queue reports what is left of its hold; once it ends, nothing.
func TestQueueCollectorReportsHolds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		_, err := runtime.Dispatch(b.ctx, step{N: 1, opts: runtime.JobOptions{Queue: "api"}})
		require.NoError(t, err)
		in := runtime.NewInspector(b.engine)
		_, err = in.HoldQueue(b.ctx, "api", time.Hour)
		require.NoError(t, err)
		c := jobprom.NewQueueCollector(b.engine, []string{"api"})
		require.InDelta(t, time.Hour.Seconds(), gauge(t, c, "jobgen_queue_hold_seconds"), 60)
		_, err = in.HoldQueue(b.ctx, "api", 0)
		require.NoError(t, err)
		c = jobprom.NewQueueCollector(b.engine, []string{"api"})
		require.Zero(t, testutil.CollectAndCount(c, "jobgen_queue_hold_seconds"))
	})
}
