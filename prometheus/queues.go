package jobprom

import (
	"context"
	"database/sql"
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
	// Flow limits (Inspector.QueueLimitsOf), of queues that have them.
	limit, running, rate, rateWindow, throttled *prometheus.Desc
	// Fair groups (Inspector.GroupCountsOf), of queues that hold grouped jobs.
	groupWaiting, groupTurns, groupRunning *prometheus.Desc
	// The outbox, as its relays last read it (Inspector.Outbox), or from
	// its database (WithOutboxDB; outbox.go).
	outboxRows, outboxOldest, outboxReadAge *prometheus.Desc
	// Failed jobs trimmed from the failed store (FailedStore.Trimmed).
	failedTrimmed failedTrimmedDescs
	outboxDB      *sql.DB
	outboxTable   string
}

// NewQueueCollector returns a collector of queues on e; nil queues means
// every queue dispatched to (Inspector.Queues, one more read per scrape).
// A scrape reads all of them in one round trip (Inspector.States), and
// their flow limits in one more (Inspector.QueueLimitsOf).
func NewQueueCollector(e *runtime.Engine, queues []string) *QueueCollector {
	return &QueueCollector{
		e: e, queues: queues, timeout: 5 * time.Second,
		jobs:   prometheus.NewDesc("jobgen_queue_jobs", "Jobs of a queue in each state: ready, delayed, reserved, failed.", []string{"queue", "state"}, nil),
		paused: prometheus.NewDesc("jobgen_queue_paused", "1 while the queue is paused.", []string{"queue"}, nil),
		limit: prometheus.NewDesc("jobgen_queue_limit", "The most jobs of a queue under lease at once (its concurrency limit); 0 for none.",
			[]string{"queue"}, nil),
		running: prometheus.NewDesc("jobgen_queue_running", "Jobs of a queue under lease now, running or prefetched: what its concurrency limit caps.",
			[]string{"queue"}, nil),
		rate: prometheus.NewDesc("jobgen_queue_rate_limit", "The most jobs of a queue started per window (its rate); 0 for none.",
			[]string{"queue"}, nil),
		rateWindow: prometheus.NewDesc("jobgen_queue_rate_window_seconds", "The window of a queue's rate.",
			[]string{"queue"}, nil),
		throttled: prometheus.NewDesc("jobgen_queue_throttled_total", "Reserves a queue's limit (by=limit) or rate (by=rate) held back while its jobs were ready.",
			[]string{"queue", "by"}, nil),
		groupWaiting: prometheus.NewDesc("jobgen_queue_group_waiting", "Jobs of a queue waiting in fair groups for their group's turn.",
			[]string{"queue"}, nil),
		groupTurns: prometheus.NewDesc("jobgen_queue_group_turns", "Fair groups of a queue on its ring of turns: with waiting jobs and below their limit.",
			[]string{"queue"}, nil),
		groupRunning: prometheus.NewDesc("jobgen_queue_group_running", "Jobs of a queue holding a slot of their group's concurrency limit.",
			[]string{"queue"}, nil),
		outboxRows: prometheus.NewDesc("jobgen_outbox_rows", "Rows of the SQL outbox waiting for a relay, by state: waiting, or parked (the relay could not push them).",
			[]string{"table", "state"}, nil),
		outboxOldest: prometheus.NewDesc("jobgen_outbox_oldest_age_seconds", "How long the outbox's oldest row had waited when a relay last read the table; 0 without rows.",
			[]string{"table"}, nil),
		outboxReadAge: prometheus.NewDesc("jobgen_outbox_read_age_seconds", "Time since a relay last read the outbox table: a relay reads it every 5 seconds, or, with the outbox database (WithOutboxDB), completes a pass every second or so; +Inf if none has.",
			[]string{"table"}, nil),
		failedTrimmed: newFailedTrimmedDescs(),
	}
}

// Describe implements prometheus.Collector.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.paused
	ch <- c.limit
	ch <- c.running
	ch <- c.rate
	ch <- c.rateWindow
	ch <- c.throttled
	ch <- c.groupWaiting
	ch <- c.groupTurns
	ch <- c.groupRunning
	ch <- c.outboxRows
	ch <- c.outboxOldest
	ch <- c.outboxReadAge
	c.failedTrimmed.describe(ch)
	ch <- outboxMissingDesc
	ch <- holdDesc
	ch <- waitDesc
}

// Collect implements prometheus.Collector. A read that fails reports an
// invalid metric, so the scrape shows the error.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// First, so that the outbox's database is read while Redis is down.
	c.collectOutbox(ctx, ch)
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
	c.collectLimits(ctx, ch, queues)
	c.collectGroups(ctx, ch, queues)
	c.failedTrimmed.collect(ctx, c.e, ch, queues)
	c.collectHolds(ctx, ch, queues)
	c.collectWaits(ctx, ch, queues)
}

// collectGroups reports the fair groups of the queues that hold grouped
// jobs.
func (c *QueueCollector) collectGroups(ctx context.Context, ch chan<- prometheus.Metric, queues []string) {
	counts, err := runtime.NewInspector(c.e).GroupCountsOf(ctx, queues)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.groupWaiting, err)
		return
	}
	for _, q := range queues {
		g := counts[q]
		if g == (runtime.GroupCounts{}) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.groupWaiting, prometheus.GaugeValue, float64(g.Waiting), q)
		ch <- prometheus.MustNewConstMetric(c.groupTurns, prometheus.GaugeValue, float64(g.Turns), q)
		ch <- prometheus.MustNewConstMetric(c.groupRunning, prometheus.GaugeValue, float64(g.Running), q)
	}
}

// collectLimits reports the flow limits of the queues that have them, or
// had: a queue whose limits were removed keeps its counters.
func (c *QueueCollector) collectLimits(ctx context.Context, ch chan<- prometheus.Metric, queues []string) {
	limits, err := runtime.NewInspector(c.e).QueueLimitsOf(ctx, queues)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.limit, err)
		return
	}
	for _, q := range queues {
		l := limits[q]
		if l.Concurrency == 0 && l.Rate == 0 && l.HeldByLimit == 0 && l.HeldByRate == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(l.Concurrency), q)
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(l.Running), q)
		ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, float64(l.Rate), q)
		ch <- prometheus.MustNewConstMetric(c.rateWindow, prometheus.GaugeValue, l.Per.Seconds(), q)
		ch <- prometheus.MustNewConstMetric(c.throttled, prometheus.CounterValue, float64(l.HeldByLimit), q, "limit")
		ch <- prometheus.MustNewConstMetric(c.throttled, prometheus.CounterValue, float64(l.HeldByRate), q, "rate")
	}
}
