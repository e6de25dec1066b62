package pgxoutbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"
)

// CompleteTx through a pgx transaction: the completion commits with the
// handler's write, a second completion of the job fails with
// ErrAlreadyCompleted (pgx's unique violation) and its write rolls
// back, and a typed nil pgx transaction is refused.
func TestCompleteTxThroughPgx(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e, err := runtime.Open(b.ctx, "redis://"+redistest.Addr(t), runtime.EngineConfig{Prefix: redistest.Prefix(t), OutboxTable: b.table, Completions: b.db})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	effects := b.table + "_effects"
	_, err = b.pool.Exec(b.ctx, "CREATE TABLE "+effects+" (job_id text NOT NULL)")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+effects) })

	id, err := runtime.Dispatch(runtime.WithDispatcher(b.ctx, e), receipt{Order: 1})
	require.NoError(t, err)
	complete := func(ctx context.Context) error {
		tx, err := b.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		info, _ := runtime.JobInfoFrom(ctx)
		if _, err := tx.Exec(ctx, "INSERT INTO "+effects+" (job_id) VALUES ($1)", info.ID); err != nil {
			return err
		}
		if err := runtime.CompleteTx(ctx, pgxoutbox.Tx(tx)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	var first, second, nilTx error
	r := runtime.NewRouter()
	runtime.Register(r, "test.Receipt", func(ctx context.Context, _ receipt) error {
		nilTx = runtime.CompleteTx(ctx, pgxoutbox.Tx(nil))
		first = complete(ctx)
		second = complete(ctx)
		return nil
	})
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"receipts"}, StopWhenEmpty: true, Sleep: 10 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))

	require.ErrorIs(t, nilTx, runtime.ErrInvalid)
	require.NoError(t, first)
	require.ErrorIs(t, second, runtime.ErrAlreadyCompleted)
	var n int
	require.NoError(t, b.pool.QueryRow(b.ctx, "SELECT count(*) FROM "+effects+" WHERE job_id = $1", id).Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, b.pool.QueryRow(b.ctx, "SELECT count(*) FROM "+b.table+"_completed WHERE id = $1", id).Scan(&n))
	require.Equal(t, 1, n)
}
