package runtime_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver, for the outbox
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/runtime"
)

// mailJob is a job dispatched through the outbox.
type mailJob struct {
	To     string
	Unique string
}

func (mailJob) JobName() string    { return "test.Mail" }
func (j mailJob) UniqueID() string { return j.Unique }
func (j mailJob) JobOptions() runtime.JobOptions {
	if j.Unique != "" {
		return runtime.JobOptions{Queue: "mail", UniqueFor: time.Minute}
	}
	return runtime.JobOptions{Queue: "mail"}
}
func (j mailJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// obundle is what an outbox test needs: an engine on a backend, and a
// database with an outbox table of the test's own. The relay's tests are
// package outbox's.
type obundle struct {
	bundle
	db    *sql.DB
	table string
}

// forEachOutbox runs fn on each backend, with a fresh outbox table.
func forEachOutbox(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b obundle)) {
	t.Helper()
	url := pgtest.URL(t)
	db, err := sql.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	forEachBackend(t, cfg, func(t *testing.T, b bundle) {
		ob := obundle{bundle: b, db: db, table: pgtest.Table(t, db)}
		ecfg := b.engine.Config()
		ecfg.OutboxTable = ob.table
		e, err := runtime.NewEngine(b.ctx, b.rdb, ecfg)
		require.NoError(t, err)
		ob.engine = e
		ob.ctx = runtime.WithDispatcher(b.ctx, e)
		require.NoError(t, runtime.MigrateOutbox(ob.ctx, db, ob.table))
		fn(t, ob)
	})
}

// rows returns the number of rows in the outbox table.
func (b obundle) rows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.QueryRowContext(b.ctx, "SELECT count(*) FROM "+b.table).Scan(&n))
	return n
}

// tx runs fn in a transaction, and commits it if commit holds.
func (b obundle) tx(t *testing.T, commit bool, fn func(tx *sql.Tx)) {
	t.Helper()
	tx, err := b.db.BeginTx(b.ctx, nil)
	require.NoError(t, err)
	fn(tx)
	if commit {
		require.NoError(t, tx.Commit())
	} else {
		require.NoError(t, tx.Rollback())
	}
}

func TestMigrateOutboxTwice(t *testing.T) {
	t.Parallel()
	forEachOutbox(t, runtime.EngineConfig{}, func(t *testing.T, b obundle) {
		require.NoError(t, runtime.MigrateOutbox(b.ctx, b.db, b.table))
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = runtime.MigrateOutbox(b.ctx, b.db, b.table) }()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		require.Equal(t, 0, b.rows(t))
	})
}

func TestOutboxTableNameIsChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"Jobs", "jobs; DROP TABLE x", "a.b.c", "", "9jobs"} {
		_, err := runtime.OutboxDDL(bad)
		require.ErrorIs(t, err, runtime.ErrInvalid, bad)
		require.ErrorContains(t, err, "OutboxTable", bad)
	}
	ddl, err := runtime.OutboxDDL("app.jobs_outbox")
	require.NoError(t, err)
	require.Contains(t, ddl, "CREATE TABLE IF NOT EXISTS app.jobs_outbox")
	// Version 3 drops the notify trigger version 1 made, and the DDL
	// records it in the version table.
	require.Contains(t, ddl, "DROP FUNCTION IF EXISTS app.jobs_outbox_notify();")
	require.Contains(t, ddl, "app.jobs_outbox_migrations")
}

// A push that reaches Redis after its claim's deadline pushes nothing,
// and leaves its row neither done nor parked, for a later claim.
func TestPushRelayedAfterTheDeadlineIsRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		res, err := b.engine.PushRelayed(b.ctx, time.UnixMilli(1), []runtime.RelayRow{
			{ID: "j1", Kind: "job", Queue: "mail", Name: "test.Mail", Payload: []byte("p1")},
		})
		require.ErrorContains(t, err, "LATE")
		require.Equal(t, []runtime.RelayOutcome{{}}, res.Rows)
		require.Zero(t, res.Pushed)
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "mail"))
		n, err := b.rdb.Exists(b.ctx, keyspace.New(b.prefix).Relayed("mail")).Result()
		require.NoError(t, err)
		require.Zero(t, n, "no mark")
	})
}

func TestDispatchTxRefusesWhatDispatchRefuses(t *testing.T) {
	t.Parallel()
	forEachOutbox(t, runtime.EngineConfig{MaxPayload: 64}, func(t *testing.T, b obundle) {
		b.tx(t, false, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: string(make([]byte, 100))})
			var big *runtime.PayloadTooLargeError
			require.ErrorAs(t, err, &big)
			_, err = runtime.NewPendingDispatch(mailJob{}).OnQueue("bad{q}").DispatchTx(b.ctx, tx)
			require.ErrorIs(t, err, runtime.ErrInvalid)
			_, err = runtime.DispatchTx(context.Background(), tx, mailJob{})
			require.ErrorIs(t, err, runtime.ErrNoDispatcher)
		})
		require.Equal(t, 0, b.rows(t))
	})
}
