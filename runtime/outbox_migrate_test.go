package runtime_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/outboxsql"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/runtime"
)

// migrateBundle is a database and an outbox table name of the test's
// own, not yet made.
func migrateBundle(t *testing.T) (context.Context, *sql.DB, string) {
	t.Helper()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return context.Background(), db, pgtest.Table(t, db)
}

// versions reads the outbox table's version rows.
func versions(t *testing.T, ctx context.Context, db *sql.DB, table string) []int {
	t.Helper()
	rows, err := db.QueryContext(ctx, "SELECT version FROM "+table+"_migrations ORDER BY version")
	require.NoError(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}

// exists says whether the table name exists.
func exists(t *testing.T, ctx context.Context, db *sql.DB, name string) bool {
	t.Helper()
	var n sql.NullString
	require.NoError(t, db.QueryRowContext(ctx, "SELECT to_regclass($1)::text", name).Scan(&n))
	return n.Valid
}

// Up from nothing, down with rows waiting (refused, then forced), and up
// again.
func TestOutboxMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	ctx, db, table := migrateBundle(t)

	steps, v, err := runtime.OutboxMigrations(ctx, db, table)
	require.NoError(t, err)
	require.Zero(t, v)
	require.Len(t, steps, runtime.OutboxSchemaVersion)
	require.ErrorIs(t, runtime.CheckOutbox(ctx, db, table), runtime.ErrNoOutboxTable)

	from, err := runtime.MigrateOutboxTo(ctx, db, table, runtime.OutboxSchemaVersion, false)
	require.NoError(t, err)
	require.Zero(t, from)
	require.Equal(t, allVersions(), versions(t, ctx, db, table))
	require.NoError(t, runtime.CheckOutbox(ctx, db, table))
	steps, v, err = runtime.OutboxMigrations(ctx, db, table)
	require.NoError(t, err)
	require.Equal(t, runtime.OutboxSchemaVersion, v)
	for _, s := range steps {
		require.False(t, s.AppliedAt.IsZero(), "version %d has no time", s.Version)
	}
	require.True(t, exists(t, ctx, db, table+"_completed"))

	// A row waiting with an At's time: version 2's down would lose it.
	_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (id, queue, name, payload, run_at) VALUES ('j1', 'q', 'n', 'p', now())")
	require.NoError(t, err)
	_, err = runtime.MigrateOutboxTo(ctx, db, table, 1, false)
	require.ErrorIs(t, err, runtime.ErrOutboxWouldLose)
	require.ErrorContains(t, err, "version 2 down")
	require.ErrorContains(t, err, "1 rows")
	require.Equal(t, allVersions(), versions(t, ctx, db, table), "a refused down changes nothing")

	_, err = db.ExecContext(ctx, "UPDATE "+table+" SET run_at = NULL")
	require.NoError(t, err)
	from, err = runtime.MigrateOutboxTo(ctx, db, table, 1, false)
	require.NoError(t, err)
	require.Equal(t, runtime.OutboxSchemaVersion, from)
	require.Equal(t, []int{1}, versions(t, ctx, db, table))
	require.False(t, exists(t, ctx, db, table+"_completed"))
	err = runtime.CheckOutbox(ctx, db, table)
	require.ErrorIs(t, err, runtime.ErrOutboxVersion)
	require.ErrorContains(t, err, "outbox:migrate")
	require.ErrorContains(t, err, fmt.Sprintf("version 1, this code needs %d", runtime.OutboxSchemaVersion))

	// To 0 with the row waiting: refused, then forced.
	_, err = runtime.MigrateOutboxTo(ctx, db, table, 0, false)
	require.ErrorIs(t, err, runtime.ErrOutboxWouldLose)
	require.True(t, exists(t, ctx, db, table))
	from, err = runtime.MigrateOutboxTo(ctx, db, table, 0, true)
	require.NoError(t, err)
	require.Equal(t, 1, from)
	for _, name := range []string{table, table + "_relays", table + "_migrations", table + "_completed"} {
		require.False(t, exists(t, ctx, db, name), name)
	}
	v, err = outboxsql.Version(ctx, db, table)
	require.NoError(t, err)
	require.Zero(t, v)

	require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
	require.Equal(t, allVersions(), versions(t, ctx, db, table))
	require.NoError(t, runtime.CheckOutbox(ctx, db, table))
}

// A table made by v0.1's Migrate, before versions, is version 1: status
// says so, the relay's check asks for outbox:migrate, and a migrate
// records it and goes on to the latest, keeping its rows.
func TestOutboxMigrateUpgradesAnUnversionedTable(t *testing.T) {
	t.Parallel()
	ctx, db, table := migrateBundle(t)
	// v0.1's Migrate ran outbox.sql and relays.sql: version 1's up.
	_, err := db.ExecContext(ctx, outboxsql.UpFor(1, table))
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (id, queue, name, payload) VALUES ('j1', 'q', 'n', 'p')")
	require.NoError(t, err)
	require.False(t, exists(t, ctx, db, table+"_migrations"))

	_, v, err := runtime.OutboxMigrations(ctx, db, table)
	require.NoError(t, err)
	require.Equal(t, 1, v)
	require.ErrorIs(t, runtime.CheckOutbox(ctx, db, table), runtime.ErrOutboxVersion)

	from, err := runtime.MigrateOutboxTo(ctx, db, table, runtime.OutboxSchemaVersion, false)
	require.NoError(t, err)
	require.Equal(t, 1, from)
	require.Equal(t, allVersions(), versions(t, ctx, db, table))
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE run_at IS NULL").Scan(&n))
	require.Equal(t, 1, n, "the waiting row is kept")
	require.NoError(t, runtime.CheckOutbox(ctx, db, table))
}

// Migrators at once, some up from nothing and some down to 1 and up
// again, leave the table at a version each of them ran to, with one
// version row per version: the advisory lock runs them one at a time.
func TestOutboxMigratorsAtOnce(t *testing.T) {
	t.Parallel()
	ctx, db, table := migrateBundle(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = runtime.MigrateOutboxTo(ctx, db, table, 1+i%2, false)
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	v := versions(t, ctx, db, table)
	require.Contains(t, [][]int{{1}, {1, 2}}, v, "each migrator ran to 1 or 2")
	require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
	require.Equal(t, allVersions(), versions(t, ctx, db, table))
}

// allVersions are the versions 1 to the latest.
func allVersions() []int {
	var out []int
	for v := 1; v <= runtime.OutboxSchemaVersion; v++ {
		out = append(out, v)
	}
	return out
}

// A table named with its schema migrates up, down to nothing and up
// again: every statement of every version names what it makes with the
// schema where PostgreSQL takes one, and without it where it does not
// (an index's name).
func TestOutboxMigrateInASchema(t *testing.T) {
	t.Parallel()
	ctx, db, plain := migrateBundle(t)
	schema := "s" + plain
	_, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	table := schema + ".jobgen_outbox"
	for _, to := range []int{runtime.OutboxSchemaVersion, 0, runtime.OutboxSchemaVersion} {
		_, err := runtime.MigrateOutboxTo(ctx, db, table, to, true)
		require.NoError(t, err, "to version %d", to)
	}
	require.Equal(t, allVersions(), versions(t, ctx, db, table))
	require.NoError(t, runtime.CheckOutbox(ctx, db, table))
}
