package jobprom

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// outboxMissingDesc says whether the outbox table exists, as the outbox
// database says (WithOutboxDB).
var outboxMissingDesc = prometheus.NewDesc("jobgen_outbox_table_missing",
	"1 when the outbox table does not exist in the outbox database, so DispatchTx fails: run outbox:migrate.",
	[]string{"table"}, nil)

// WithOutboxDB makes c read the outbox from db, the database holding
// the outbox table named table (runtime.DefaultOutboxTable if empty),
// rather than from what a relay last published to Redis: the backlog,
// the oldest row's age and the time since a relay last completed a pass
// (outbox.ReadHealth), so that a dead relay or a Redis outage shows.
// The outbox is read first, and a scrape reports it while Redis is
// down. It also reports jobgen_outbox_table_missing. It returns c.
func (c *QueueCollector) WithOutboxDB(db *sql.DB, table string) *QueueCollector {
	c.outboxDB, c.outboxTable = db, table
	return c
}

// collectOutbox reports the outbox: from its database if c has one, else
// as a relay last published it, if one has.
func (c *QueueCollector) collectOutbox(ctx context.Context, ch chan<- prometheus.Metric) {
	if c.outboxDB != nil {
		c.collectOutboxDB(ctx, ch)
		return
	}
	b, ok, err := runtime.NewInspector(c.e).Outbox(ctx)
	switch {
	case err != nil:
		ch <- prometheus.NewInvalidMetric(c.outboxRows, err)
		return
	case !ok:
		return
	}
	ch <- prometheus.MustNewConstMetric(c.outboxRows, prometheus.GaugeValue, float64(b.Rows-b.Parked), b.Table, "waiting")
	ch <- prometheus.MustNewConstMetric(c.outboxRows, prometheus.GaugeValue, float64(b.Parked), b.Table, "parked")
	ch <- prometheus.MustNewConstMetric(c.outboxOldest, prometheus.GaugeValue, b.Age().Seconds(), b.Table)
	ch <- prometheus.MustNewConstMetric(c.outboxReadAge, prometheus.GaugeValue, max(time.Since(b.At), 0).Seconds(), b.Table)
}

// collectOutboxDB reports the outbox as its database holds it. The time
// since a relay last read it is +Inf when no relay has recorded a pass.
func (c *QueueCollector) collectOutboxDB(ctx context.Context, ch chan<- prometheus.Metric) {
	h, err := outbox.ReadHealth(ctx, c.outboxDB, c.outboxTable)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.outboxRows, err)
		return
	}
	missing := 0.0
	if h.Missing {
		missing = 1
	}
	ch <- prometheus.MustNewConstMetric(outboxMissingDesc, prometheus.GaugeValue, missing, h.Table)
	if h.Missing {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.outboxRows, prometheus.GaugeValue, float64(h.Rows-h.Parked), h.Table, "waiting")
	ch <- prometheus.MustNewConstMetric(c.outboxRows, prometheus.GaugeValue, float64(h.Parked), h.Table, "parked")
	ch <- prometheus.MustNewConstMetric(c.outboxOldest, prometheus.GaugeValue, h.Oldest.Seconds(), h.Table)
	since := math.Inf(1)
	if h.Passed {
		since = h.SincePass.Seconds()
	}
	ch <- prometheus.MustNewConstMetric(c.outboxReadAge, prometheus.GaugeValue, since, h.Table)
}
