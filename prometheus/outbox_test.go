package jobprom_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver, for the outbox
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/outbox"
	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// The queue collector reports the outbox as a relay last read it.
func TestQueueCollectorReportsTheOutbox(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		db, err := sql.Open("postgres", pgtest.URL(t))
		require.NoError(t, err)
		defer db.Close()
		table := pgtest.Table(t, db)
		require.NoError(t, runtime.MigrateOutbox(b.ctx, db, table))
		_, err = db.Exec("INSERT INTO " + table + " (id, kind, queue, name, payload, created_at) VALUES " +
			"('a', 'nonsense', 'x', 'x', '\\x00', now() - interval '1 hour')")
		require.NoError(t, err)
		cfg := b.engine.Config()
		cfg.OutboxTable = table
		e, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
		require.NoError(t, err)
		r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		go func() { _ = r.Run(ctx) }()
		require.Eventually(t, func() bool {
			got, ok, err := runtime.NewInspector(e).Outbox(b.ctx)
			return err == nil && ok && got.Parked == 1
		}, 10*time.Second, 20*time.Millisecond)

		want := `
# HELP jobgen_outbox_rows Rows of the SQL outbox waiting for a relay, by state: waiting, or parked (the relay could not push them).
# TYPE jobgen_outbox_rows gauge
jobgen_outbox_rows{state="parked",table="` + table + `"} 1
jobgen_outbox_rows{state="waiting",table="` + table + `"} 0
`
		c := jobprom.NewQueueCollector(b.engine, []string{})
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want), "jobgen_outbox_rows"))
		require.InDelta(t, time.Hour.Seconds(), gauge(t, c, "jobgen_outbox_oldest_age_seconds"), 60)
		require.Less(t, gauge(t, c, "jobgen_outbox_read_age_seconds"), 30.0)
	})
}

// gauge returns the value of the one gauge named name that c collects.
func gauge(t *testing.T, c prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			require.Len(t, mf.GetMetric(), 1)
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
