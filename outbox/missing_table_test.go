package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// A relay whose outbox table does not exist refuses to start, naming the
// table and outbox:migrate; it used to run, logging the claim's error
// while every DispatchTx failed. CheckOutbox says the same to an
// application at its start.
func TestRelayRefusesToStartWithoutItsTable(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		_, err := b.db.ExecContext(b.ctx, "DROP TABLE "+b.table)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		err = b.relay.Run(ctx)
		require.ErrorIs(t, err, runtime.ErrNoOutboxTable)
		require.ErrorContains(t, err, b.table)
		require.ErrorContains(t, err, "outbox:migrate")
		require.NoError(t, ctx.Err(), "Run returned at once, not when ctx ended")

		err = runtime.CheckOutbox(b.ctx, b.db, b.table)
		require.ErrorIs(t, err, runtime.ErrNoOutboxTable)

		require.NoError(t, runtime.MigrateOutbox(b.ctx, b.db, b.table))
		require.NoError(t, runtime.CheckOutbox(b.ctx, b.db, b.table))
		r, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db})
		require.NoError(t, err)
		ctx, cancel = context.WithCancel(b.ctx)
		cancel()
		require.NoError(t, r.Run(ctx))
	})
}
