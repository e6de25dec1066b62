package jobprom

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobgen/jobgen/runtime"
)

// QueueCollector is a prometheus.Collector of every queue's job counts
// by state and paused flag, read from Redis at each scrape.
type QueueCollector struct {
	e       *runtime.Engine
	queues  []string
	timeout time.Duration
	jobs    *prometheus.Desc
	paused  *prometheus.Desc
}

// NewQueueCollector returns a collector of queues on e; nil queues means
// every queue dispatched to (Inspector.Queues, one more read per scrape).
// A scrape reads all of them in one round trip (Inspector.States).
func NewQueueCollector(e *runtime.Engine, queues []string) *QueueCollector {
	return &QueueCollector{
		e: e, queues: queues, timeout: 5 * time.Second,
		jobs:   prometheus.NewDesc("jobgen_queue_jobs", "Jobs of a queue in each state: ready, delayed, reserved, failed.", []string{"queue", "state"}, nil),
		paused: prometheus.NewDesc("jobgen_queue_paused", "1 while the queue is paused.", []string{"queue"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.paused
}

// Collect implements prometheus.Collector. A read that fails reports an
// invalid metric, so the scrape shows the error.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	queues := c.queues
	if queues == nil {
		var err error
		if queues, err = runtime.NewInspector(c.e).Queues(ctx); err != nil {
			ch <- prometheus.NewInvalidMetric(c.jobs, err)
			return
		}
	}
	states, err := runtime.NewInspector(c.e).States(ctx, queues)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	for _, q := range queues {
		s := states[q]
		for _, v := range []struct {
			state string
			n     int64
		}{{"ready", s.Ready}, {"delayed", s.Delayed}, {"reserved", s.Reserved}, {"failed", s.Failed}} {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(v.n), q, v.state)
		}
		paused := 0.0
		if s.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, paused, q)
	}
}
