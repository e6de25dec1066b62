package pgxoutbox_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

type receipt struct{ Order int }

func (receipt) JobName() string                { return "test.Receipt" }
func (receipt) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "receipts"} }
func (j receipt) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type bundle struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	db     *sql.DB
	table  string
	engine *runtime.Engine
}

func setup(t *testing.T) bundle {
	t.Helper()
	url := pgtest.URL(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	db := pgxoutbox.DB(pool)
	table := pgtest.Table(t, db)
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t), runtime.EngineConfig{Prefix: redistest.Prefix(t), OutboxTable: table})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
	return bundle{ctx: runtime.WithDispatcher(ctx, e), pool: pool, db: db, table: table, engine: e}
}

func (b bundle) ready(t *testing.T) int64 {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "receipts")
	require.NoError(t, err)
	return s.Ready
}

// A job written through a pgx transaction exists only if it commits, and
// the listener wakes a relay that would otherwise not look for an hour.
func TestPgxTxAndListener(t *testing.T) {
	t.Parallel()
	b := setup(t)
	wake, err := pgxoutbox.Listen(b.ctx, b.pool, b.table)
	require.NoError(t, err)
	defer wake.Close()
	relay, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db, Wake: wake, Poll: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error)
	go func() { done <- relay.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	tx, err := b.pool.Begin(b.ctx)
	require.NoError(t, err)
	_, err = runtime.DispatchTx(b.ctx, pgxoutbox.Tx(tx), receipt{Order: 1})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(b.ctx))
	// The rolled-back transaction ran this process's notify of the
	// table, which never reached the relay: a transaction within
	// runtime.OutboxNotifyEvery of it would send none, its row left to
	// the relay's poll (docs/outbox.md, "Waking the relay"), an hour
	// here. The commits below come after.
	time.Sleep(2 * runtime.OutboxNotifyEvery)

	for i := range 3 {
		tx, err := b.pool.Begin(b.ctx)
		require.NoError(t, err)
		_, err = runtime.NewPendingDispatch(receipt{Order: 2 + i}).DispatchTx(b.ctx, pgxoutbox.Tx(tx))
		require.NoError(t, err)
		require.NoError(t, tx.Commit(b.ctx))
		require.Eventually(t, func() bool { return b.ready(t) == int64(i+1) }, 5*time.Second, 5*time.Millisecond,
			"commit %d did not wake the relay", i)
	}

	// A listener whose connection is killed connects again, and wakes
	// the relay for what it may have missed. (Only this test's listener:
	// the other tests' run beside it.)
	_, err = b.db.ExecContext(b.ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()", "LISTEN "+runtime.OutboxChannel(b.table))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	tx, err = b.pool.Begin(b.ctx)
	require.NoError(t, err)
	_, err = runtime.DispatchManyTx(b.ctx, pgxoutbox.Tx(tx), []receipt{{Order: 10}, {Order: 11}})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(b.ctx))
	require.Eventually(t, func() bool { return b.ready(t) == 5 }, 10*time.Second, 5*time.Millisecond)
}

// The database/sql path, through pgx's own driver.
func TestDatabaseSQLThroughPgxStdlib(t *testing.T) {
	t.Parallel()
	b := setup(t)
	db, err := sql.Open("pgx", pgtest.URL(t))
	require.NoError(t, err)
	defer db.Close()
	tx, err := db.BeginTx(b.ctx, nil)
	require.NoError(t, err)
	id, err := runtime.DispatchTx(b.ctx, tx, receipt{Order: 7})
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	relay, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: db})
	require.NoError(t, err)
	n, err := relay.RelayOnce(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "receipts", 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	require.Equal(t, id, res.Jobs[0].ID)
}

func TestListenRefusesABadTableName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := pgxoutbox.Listen(b.ctx, b.pool, "Bad Name")
	require.ErrorIs(t, err, runtime.ErrInvalid)
}
