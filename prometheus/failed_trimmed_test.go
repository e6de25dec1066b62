package jobprom_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// The queue collector reports the failed jobs trimming dropped, per
// queue: 0 included where the engine's failed store is bounded, and
// only queues trimmed before where it is not.
func TestQueueCollectorReportsFailedTrimmed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		cfg := b.engine.Config()
		cfg.FailedMaxCount = 1
		e, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
		require.NoError(t, err)
		for _, id := range []string{"a", "b", "c"} {
			require.NoError(t, e.Push(b.ctx, &runtime.Envelope{ID: id, Name: "test.Step", Queue: "billing", Body: []byte{0x80}}))
			res, err := runtime.NewBroker(e).Reserve(b.ctx, "billing", 1, time.Minute)
			require.NoError(t, err)
			require.NoError(t, runtime.NewBroker(e).Fail(b.ctx, runtime.Failure{Ref: res.Jobs[0].Ref, Name: "test.Step", Err: errors.New("declined"), Attempts: 1}))
		}
		want := `
# HELP jobgen_failed_trimmed_total Failed jobs dropped from a queue's failed store by trimming (EngineConfig.FailedMaxCount, FailedMaxAge); alert on any increase.
# TYPE jobgen_failed_trimmed_total counter
jobgen_failed_trimmed_total{queue="billing"} 2
jobgen_failed_trimmed_total{queue="mail"} 0
`
		c := jobprom.NewQueueCollector(e, []string{"billing", "mail"})
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want), "jobgen_failed_trimmed_total"))
		unbounded := jobprom.NewQueueCollector(b.engine, []string{"billing", "mail"})
		require.NoError(t, testutil.CollectAndCompare(unbounded, strings.NewReader(strings.ReplaceAll(want, "jobgen_failed_trimmed_total{queue=\"mail\"} 0\n", "")), "jobgen_failed_trimmed_total"))
		last := gauge(t, c, "jobgen_failed_trimmed_last_timestamp_seconds")
		require.InDelta(t, float64(time.Now().Unix()), last, 60)
	})
}
