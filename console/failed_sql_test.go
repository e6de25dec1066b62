package console_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/failedsql"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// charge fails its first run and succeeds after, counting its runs.
type charge struct{ Invoice int }

func (charge) JobName() string                { return "test.Charge" }
func (charge) JobOptions() runtime.JobOptions { return runtime.JobOptions{Tries: 1} }
func (j charge) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// withFailedTable gives b's commands a failed store in a PostgreSQL
// table of the test's own, created with failed:migrate.
func withFailedTable(t *testing.T, b *testBundle) (*sql.DB, string) {
	t.Helper()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db)
	store, err := failedsql.New(failedsql.Config{DB: db, Table: table})
	require.NoError(t, err)
	b.failedStore = store
	require.Contains(t, b.ok(t, "failed:migrate", "--print"), "CREATE TABLE IF NOT EXISTS "+table+" (")
	require.Equal(t, "Failed jobs table "+table+" migrated from version 0 to 1.\n", b.ok(t, "failed:migrate"))
	require.Equal(t, "Failed jobs table "+table+" is at version 1; nothing to do.\n", b.ok(t, "failed:migrate"))
	return db, table
}

// failed:migrate moves the failed jobs table as outbox:migrate moves the
// outbox's: --status, a down refused while it holds failed jobs and
// forced, up again; a table made before versions is version 1.
func TestFailedMigrateVersions(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	db, table := withFailedTable(t, b)
	require.Regexp(t, `^Failed jobs table `+table+` is at version 1 of 1\.\n  1  failed jobs table, its index .* applied 20\d\d-`, b.ok(t, "failed:migrate", "--status"))
	_, err := db.Exec("INSERT INTO " + table + " (uuid, queue, payload, exception, failed_at) VALUES ('j1', 'q', 'p', 'e', now())")
	require.NoError(t, err)
	code, _, stderr := b.runRaw(t, "failed:migrate", "--down")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "would lose 1 rows")
	require.Contains(t, stderr, "--force")
	require.Equal(t, "Failed jobs table "+table+" migrated from version 1 to 0.\n", b.ok(t, "failed:migrate", "--to", "0", "--force"))
	var n sql.NullString
	require.NoError(t, db.QueryRow("SELECT to_regclass($1)::text", table).Scan(&n))
	require.False(t, n.Valid, "the table is dropped")

	// As v0.1's failed:migrate made it: no version table.
	store, err := failedsql.New(failedsql.Config{DB: db, Table: table})
	require.NoError(t, err)
	_, err = db.Exec(strings.ReplaceAll(strings.ReplaceAll(failedsql.Steps[0].Up, "{{table}}", table), "{{name}}", table))
	require.NoError(t, err)
	_, at, err := store.Migrations(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, at)
	require.Contains(t, b.ok(t, "failed:migrate", "--status"), "applied before versions were recorded")
	require.Equal(t, "Failed jobs table "+table+" is at version 1; nothing to do.\n", b.ok(t, "failed:migrate"))
	require.Regexp(t, `applied 20\d\d-`, b.ok(t, "failed:migrate", "--status"))
}

// With a failed store in PostgreSQL, a job that fails lands in the table
// (and leaves Redis), queue:failed lists it, queue:retry runs it again
// and removes its row, and queue:forget deletes another.
func TestFailedStoreInPostgres(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		db, table := withFailedTable(t, b)
		var runs atomic.Int64
		runtime.Register(b.router, "test.Charge", func(ctx context.Context, j charge) error {
			if runs.Add(1) == 1 {
				return errors.New("card declined")
			}
			return nil
		})
		rows := func() (n int) {
			require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
			return n
		}

		ids := b.push(t, "billing", charge{Invoice: 7})
		b.ok(t, "queue:work", "--queue", "billing", "--stop-when-empty")
		require.Equal(t, int64(1), runs.Load())
		require.Equal(t, 1, rows(), "the failed job is in the table")
		var name, exception string
		require.NoError(t, db.QueryRow("SELECT name, exception FROM "+table+" WHERE uuid = $1", ids[0]).Scan(&name, &exception))
		require.Equal(t, "test.Charge", name)
		require.Equal(t, "jobgen: job failed on its only try: card declined", exception)
		n, err := b.engine.Client().ZCard(b.ctx, b.prefix+":{billing}:failed").Result()
		require.NoError(t, err)
		require.Zero(t, n, "and no longer in Redis")

		out := b.ok(t, "queue:failed")
		require.Contains(t, out, ids[0]+"  billing  test.Charge  1 ")
		require.Contains(t, out, "card declined")
		require.Contains(t, b.ok(t, "queue:monitor", "billing"), "billing  0     1       OK")
		job := b.ok(t, "queue:job", ids[0])
		require.Regexp(t, `\nState +failed`, job)
		require.Contains(t, job, "card declined")

		require.Equal(t, "Retried "+ids[0]+" on queue billing.\n", b.ok(t, "queue:retry", ids[0]))
		require.Zero(t, rows(), "the row goes once the job is pushed")
		b.ok(t, "queue:work", "--queue", "billing", "--stop-when-empty")
		require.Equal(t, int64(2), runs.Load(), "the retried job ran again")
		require.Equal(t, "No failed jobs.\n", b.ok(t, "queue:failed"))

		more := b.push(t, "billing", charge{Invoice: 8})
		runs.Store(0)
		b.ok(t, "queue:work", "--queue", "billing", "--stop-when-empty")
		require.Contains(t, b.ok(t, "queue:failed"), more[0])
		require.Equal(t, "Deleted failed job "+more[0]+" of queue billing.\n", b.ok(t, "queue:forget", more[0]))
		require.Zero(t, rows())
		code, _, stderr := b.run(t, "queue:forget", more[0])
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "no failed job with ID "+more[0])

		// queue:prune-failed bounds the table.
		b.push(t, "billing", charge{Invoice: 9})
		runs.Store(0)
		b.ok(t, "queue:work", "--queue", "billing", "--stop-when-empty")
		require.Equal(t, 1, rows())
		require.Equal(t, "Deleted 0 failed jobs older than 1 hour.\n", b.ok(t, "queue:prune-failed", "--hours", "1"))
		_, err = db.Exec("UPDATE " + table + " SET failed_at = failed_at - interval '2 hours'")
		require.NoError(t, err)
		require.Equal(t, "Deleted 1 failed job older than 1 hour.\n", b.ok(t, "queue:prune-failed", "--hours", "1"))
		require.Zero(t, rows())
	})
}

// FailedStore is refused with a bound of Redis's store, by name.
func TestFailedStoreRefusesBounds(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("postgres", "postgres://127.0.0.1:1/none")
	require.NoError(t, err)
	defer db.Close()
	store, err := failedsql.New(failedsql.Config{DB: db})
	require.NoError(t, err)
	_, err = runtime.NewEngine(context.Background(), nil, runtime.EngineConfig{FailedStore: store, FailedMaxCount: 100})
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorContains(t, err, "EngineConfig.FailedMaxCount (100) must be 0 with EngineConfig.FailedStore (PostgreSQL table jobgen_failed_jobs)")
	_, err = failedsql.New(failedsql.Config{})
	require.ErrorContains(t, err, "failedsql.Config.DB is required")
	_, err = failedsql.New(failedsql.Config{DB: db, Table: "Failed Jobs"})
	require.ErrorContains(t, err, `failedsql.Config.Table "Failed Jobs" must be a lower-case SQL name`)
	require.True(t, strings.HasPrefix(err.Error(), runtime.ErrInvalid.Error()))
}
