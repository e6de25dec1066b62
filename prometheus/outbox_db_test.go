package jobprom_test

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// outboxGauges collects c straight from Collect, as a scrape would,
// and returns the outbox gauges' values by name and state, leaving out
// the metrics whose read failed (Redis down); a scrape through a
// registry would fail as a whole on those.
func outboxGauges(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil || d.GetGauge() == nil {
			continue
		}
		desc := m.Desc().String()
		if !strings.Contains(desc, `"jobgen_outbox_`) {
			continue
		}
		name := desc[strings.Index(desc, `"`)+1:]
		name = name[:strings.Index(name, `"`)]
		for _, l := range d.GetLabel() {
			if l.GetName() == "state" {
				name += "/" + l.GetValue()
			}
		}
		out[name] = d.GetGauge().GetValue()
	}
	return out
}

// A relay stops while rows wait: the collector given the outbox
// database reports the backlog, its age and the time since the last
// pass from PostgreSQL, with Redis up and with Redis down, where the
// relay's last report to Redis says no row waits.
func TestQueueCollectorReadsTheOutboxDatabase(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	ctx := context.Background()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	defer db.Close()
	table := pgtest.Table(t, db)
	require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
	e, err := runtime.Open(ctx, "redis://"+srv.Addr+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t), OutboxTable: table})
	require.NoError(t, err)
	defer e.Close()
	r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(rctx) }()
	require.Eventually(t, func() bool {
		h, err := outbox.ReadHealth(ctx, db, table)
		require.NoError(t, err)
		_, ok, err := runtime.NewInspector(e).Outbox(ctx)
		return err == nil && ok && h.Passed
	}, 10*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-stopped)

	_, err = db.Exec("INSERT INTO " + table + " (id, kind, queue, name, payload, created_at) VALUES " +
		"('a', 'job', 'default', 'x', '\\x00', now() - interval '1 hour'), ('b', 'job', 'default', 'x', '\\x00', now())")
	require.NoError(t, err)

	published := outboxGauges(t, jobprom.NewQueueCollector(e, []string{}))
	require.Zero(t, published["jobgen_outbox_rows/waiting"], "the relay's last report")

	c := jobprom.NewQueueCollector(e, []string{}).WithOutboxDB(db, table)
	for _, redis := range []string{"up", "down"} {
		if redis == "down" {
			srv.Stop()
		}
		got := outboxGauges(t, c)
		require.Equal(t, 2.0, got["jobgen_outbox_rows/waiting"], "Redis %s", redis)
		require.Zero(t, got["jobgen_outbox_rows/parked"])
		require.Zero(t, got["jobgen_outbox_table_missing"])
		require.InDelta(t, time.Hour.Seconds(), got["jobgen_outbox_oldest_age_seconds"], 60)
		require.Less(t, got["jobgen_outbox_read_age_seconds"], time.Hour.Seconds())
		require.False(t, math.IsInf(got["jobgen_outbox_read_age_seconds"], 1))
	}

	// A missing table is a gauge of its own.
	missing := outboxGauges(t, jobprom.NewQueueCollector(e, []string{}).WithOutboxDB(db, table+"_gone"))
	require.Equal(t, map[string]float64{"jobgen_outbox_table_missing": 1}, missing)
	// A table no relay has passed over: the time since is +Inf.
	fresh := pgtest.Table(t, db)
	require.NoError(t, runtime.MigrateOutbox(ctx, db, fresh))
	got := outboxGauges(t, jobprom.NewQueueCollector(e, []string{}).WithOutboxDB(db, fresh))
	require.True(t, math.IsInf(got["jobgen_outbox_read_age_seconds"], 1))
}
