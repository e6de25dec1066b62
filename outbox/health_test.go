package outbox_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// A relay records its completed passes in PostgreSQL; a relay that runs
// on while its Redis is down completes none, so its record goes stale
// while rows wait, and ReadHealth's problems say so, though the relay's
// last report to Redis said no row was waiting.
func TestRelayRecordsNoPassWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	ctx := context.Background()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	defer db.Close()
	table := pgtest.Table(t, db)

	h, err := outbox.ReadHealth(ctx, db, table)
	require.NoError(t, err)
	require.True(t, h.Missing)
	require.Equal(t, []string{"outbox table " + table + " does not exist, so DispatchTx fails: run outbox:migrate, or add runtime.OutboxDDL(\"" + table + "\") to the application's migrations"},
		h.Problems(0, 0))

	require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
	e, err := runtime.Open(ctx, "redis://"+srv.Addr+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t), OutboxTable: table})
	require.NoError(t, err)
	defer e.Close()
	r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db, Poll: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = r.Run(rctx) }()
	require.Eventually(t, func() bool {
		h, err = outbox.ReadHealth(ctx, db, table)
		require.NoError(t, err)
		return h.Passed && h.Live == 1
	}, 10*time.Second, 10*time.Millisecond, "the relay records its passes")
	require.Empty(t, h.Problems(time.Minute, time.Minute))

	srv.Stop()
	_, err = db.Exec("INSERT INTO " + table + " (id, kind, queue, name, payload) VALUES ('a', 'job', 'default', 'x', '\\x00')")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		h, err = outbox.ReadHealth(ctx, db, table)
		require.NoError(t, err)
		return h.SincePass > 2*time.Second
	}, 20*time.Second, 50*time.Millisecond, "a relay without Redis completes no pass")
	require.Equal(t, int64(1), h.Rows)
	require.Len(t, h.Problems(0, 2*time.Second), 1)
	require.Contains(t, h.Problems(0, 2*time.Second)[0], "1 row waiting, and no relay has completed a pass for")
}
