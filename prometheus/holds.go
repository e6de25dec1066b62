package jobprom

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobgen/jobgen/runtime"
)

// holdDesc describes the time left of a queue's hold.
var holdDesc = prometheus.NewDesc("jobgen_queue_hold_seconds",
	"Time left of a queue's hold (runtime.HoldQueue), during which no worker takes its jobs; reported only while one is on.",
	[]string{"queue"}, nil)

// collectHolds reports the queues held now (Inspector.QueueHolds).
func (c *QueueCollector) collectHolds(ctx context.Context, ch chan<- prometheus.Metric, queues []string) {
	holds, err := runtime.NewInspector(c.e).QueueHolds(ctx, queues)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(holdDesc, err)
		return
	}
	for q, d := range holds {
		ch <- prometheus.MustNewConstMetric(holdDesc, prometheus.GaugeValue, d.Seconds(), q)
	}
}
