package jobprom

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobgen/jobgen/runtime"
)

// waitDesc describes how long a queue's oldest ready job has waited:
// the figure queue:monitor --max-wait alerts on.
var waitDesc = prometheus.NewDesc("jobgen_queue_oldest_wait_seconds",
	"How long the oldest ready job of a queue has waited since its dispatch (what queue:monitor --max-wait checks); reported only while a job is ready.",
	[]string{"queue"}, nil)

// collectWaits reports the wait of each queue's oldest ready job
// (Inspector.OldestReady): one read per queue, two per partition of a
// partitioned queue.
func (c *QueueCollector) collectWaits(ctx context.Context, ch chan<- prometheus.Metric, queues []string) {
	in := runtime.NewInspector(c.e)
	now := time.Now()
	for _, q := range queues {
		at, ok, err := in.OldestReady(ctx, q)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(waitDesc, err)
			return
		}
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(waitDesc, prometheus.GaugeValue, max(now.Sub(at), 0).Seconds(), q)
	}
}
