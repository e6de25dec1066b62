package outboxsql

import (
	"context"
	"database/sql"
	"embed"
	"strings"

	"github.com/jobgen/jobgen/internal/sqlmigrate"
)

// The outbox's schema is a list of versions, each an up and a down
// (Steps): the version table (<table>_migrations) holds a row per version
// applied, and Migrate moves the schema up or down to a version in one
// transaction that holds an advisory lock on the table's name
// (internal/sqlmigrate). Adding a version is adding its two files to
// migrations/ and its entry to Steps, and moving Need on.

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Step is one version of the outbox's schema.
type Step = sqlmigrate.Step

// Applied is one version and when it was applied.
type Applied = sqlmigrate.Applied

// ErrWouldLose is wrapped by Migrate's error when a down would drop rows
// and force is not set.
var ErrWouldLose = sqlmigrate.ErrWouldLose

// Steps are the versions of the schema, in order. Version 1 is what
// Migrate made before versions existed (outbox.sql and relays.sql), so a
// table made then is at version 1.
var Steps = []Step{
	{Version: 1, Name: "outbox table, its trigger, relays table", Up: ddl + "\n" + relaysDDL, Down: file("001_create.down.sql"),
		Loses: "SELECT count(*) FROM {{table}}"},
	{Version: 2, Name: "run_at (At), completed table (CompleteTx)", Up: file("002_run_at_completions.up.sql"), Down: file("002_run_at_completions.down.sql"),
		Loses: "SELECT (SELECT count(*) FROM {{table}} WHERE run_at IS NOT NULL) + (SELECT count(*) FROM {{completions}})"},
	{Version: 3, Name: "no notify trigger: DispatchTx notifies, at most once every 5 ms", Up: file("003_wake.up.sql"), Down: file("003_wake.down.sql")},
}

// Need is the version this code needs: a relay refuses to start on a
// table at an older one (runtime.CheckOutbox). It is the last of Steps
// (TestNeedIsTheLatest).
const Need = 3

func file(name string) string {
	b, err := migrationFiles.ReadFile("migrations/" + name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// The suffixes of the tables beside the outbox table.
const (
	MigrationsSuffix  = "_migrations"
	CompletionsSuffix = "_completed"
)

// Migrations is the name of the version table of the outbox table named
// table.
func Migrations(table string) string { return table + MigrationsSuffix }

// Completions is the name of the table of CompleteTx's rows beside the
// outbox table named table.
func Completions(table string) string { return table + CompletionsSuffix }

// names fills in the names of the statements of table.
func names(table string) *strings.Replacer {
	name := table[strings.LastIndexByte(table, '.')+1:]
	return strings.NewReplacer("{{table}}", table, "{{channel}}", Channel(table), "{{name}}", name,
		"{{relays}}", Relays(table), "{{completions}}", Completions(table), "{{migrations}}", Migrations(table))
}

// schema is the outbox's schema for table.
func schema(table string) sqlmigrate.Schema {
	return sqlmigrate.Schema{What: "outbox", Table: table, Versions: Migrations(table),
		// The key of the unversioned Migrate's lock, which an older deploy
		// may still take.
		Lock:  "jobgen.outbox." + table,
		Steps: Steps, Names: names(table)}
}

// Version reads the version of the outbox table named table in q: the
// highest of its version table; 1 for a table made before versions
// existed; 0 for none, whatever its version table says (the table was
// dropped by hand).
func Version(ctx context.Context, q sqlmigrate.Querier, table string) (int, error) {
	return schema(table).Version(ctx, q)
}

// Status lists Steps with the time each was applied to the outbox table
// named table in db, and returns its version.
func Status(ctx context.Context, db *sql.DB, table string) ([]Applied, int, error) {
	if err := checkNames(table); err != nil {
		return nil, 0, err
	}
	return schema(table).Status(ctx, db)
}

// Migrate moves the schema of the outbox table named table in db to
// version to (0 drops it all, len(Steps) is the latest), as
// sqlmigrate.Schema.Migrate does, and returns the version it was at.
func Migrate(ctx context.Context, db *sql.DB, table string, to int, force bool) (from int, err error) {
	if err := checkNames(table); err != nil {
		return 0, err
	}
	return schema(table).Migrate(ctx, db, to, force)
}

// checkNames checks table's name and the names beside it.
func checkNames(table string) error {
	if err := CheckTable(table); err != nil {
		return err
	}
	return CheckRelays(table)
}

// UpFor returns version v's up with the names of the outbox table named
// table.
func UpFor(v int, table string) string { return names(table).Replace(Steps[v-1].Up) }
