package dashboard_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver, for the outbox
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// The overview shows the outbox's backlog once a relay has read it, and
// a table name is text, not markup.
func TestOverviewShowsTheOutbox(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	_, body, _ := b.get(t, "")
	require.NotContains(t, body, `id="outbox"`, "no relay has reported")

	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	defer db.Close()
	table := pgtest.Table(t, db)
	require.NoError(t, runtime.MigrateOutbox(b.ctx, db, table))
	_, err = db.Exec("INSERT INTO " + table + " (id, kind, queue, name, payload, created_at) VALUES " +
		"('a', 'nonsense', 'notes', 'x', '\\x00', now() - interval '90 seconds'), ('b', 'nonsense', 'notes', 'y', '\\x00', now())")
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
		return err == nil && ok && got.Parked == 2
	}, 10*time.Second, 20*time.Millisecond)

	status, body, _ := b.get(t, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span class="label">Outbox `+table+`</span><span class="value bad" id="outbox-rows">2</span>`)
	require.Regexp(t, `oldest 1m 3\ds; 2 parked; read <time data-ago="\d+">\d+(ms|s|µs)</time> ago`, body)
}

// Given the outbox database, the overview's Outbox card reads it: a
// missing table says so, and rows no relay has passed over show with
// the relay's silence, where Redis has no report of them.
func TestOverviewReadsTheOutboxDatabase(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	defer db.Close()
	table := pgtest.Table(t, db)
	b := setup(t, dashboard.Options{OutboxDB: db, OutboxTable: table})
	_, body, _ := b.get(t, "")
	require.Contains(t, body, `<span class="value bad" id="outbox-rows">missing</span><span class="sub">the table does not exist: run outbox:migrate</span>`)

	require.NoError(t, runtime.MigrateOutbox(b.ctx, db, table))
	_, err = db.Exec("INSERT INTO " + table + " (id, kind, queue, name, payload, created_at) VALUES " +
		"('a', 'job', 'notes', 'x', '\\x00', now() - interval '90 seconds')")
	require.NoError(t, err)
	status, body, _ := b.get(t, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span class="label">Outbox `+table+`</span><span class="value" id="outbox-rows">1</span>`)
	require.Regexp(t, `oldest 1m 3\ds; <span id="outbox-pass" class="bad">no relay has passed</span>`, body)
}
