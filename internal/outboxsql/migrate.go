package outboxsql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The outbox's schema is a list of versions, each an up and a down
// (Steps): the version table (<table>_migrations) holds a row per version
// applied, and Migrate moves the schema up or down to a version in one
// transaction that holds an advisory lock on the table's name. Adding a
// version is adding its two files to migrations/ and its entry to Steps;
// Need follows the last.

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Step is one version of the outbox's schema.
type Step struct {
	// Version is the version the schema is at once Up has run: 1, 2, ...
	Version int
	// Name says what the version brings, for the status.
	Name string
	// Up and Down are the statements, with {{table}} and the other names
	// (names) to fill in.
	Up, Down string
	// Loses, if set, is a statement counting what Down would lose: rows
	// waiting to be relayed, say. Migrate refuses a down it counts
	// anything for, unless forced.
	Loses string
}

// Steps are the versions of the schema, in order. Version 1 is what
// Migrate made before versions existed (outbox.sql and relays.sql), so a
// table made then is at version 1.
var Steps = []Step{
	{Version: 1, Name: "outbox table, its trigger, relays table", Up: ddl + "\n" + relaysDDL, Down: file("001_create.down.sql"),
		Loses: "SELECT count(*) FROM {{table}}"},
	{Version: 2, Name: "run_at (At), completed table (CompleteTx)", Up: file("002_run_at_completions.up.sql"), Down: file("002_run_at_completions.down.sql"),
		Loses: "SELECT (SELECT count(*) FROM {{table}} WHERE run_at IS NOT NULL) + (SELECT count(*) FROM {{completions}})"},
}

// Need is the version this code needs: a relay refuses to start on a
// table at an older one (runtime.CheckOutbox).
const Need = 2

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

// versionTable creates the version table.
const versionTable = `CREATE TABLE IF NOT EXISTS {{migrations}} (
    -- A version of the outbox's schema (outbox:migrate --status lists them).
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
`

// ErrWouldLose is wrapped by Migrate's error when a down would drop rows
// and force is not set.
var ErrWouldLose = errors.New("the down would lose rows")

// Applied is one version and when it was applied: zero for one that is
// not.
type Applied struct {
	Step
	AppliedAt time.Time
}

// Version reads the version of the outbox table named table in q: the
// highest of its version table; 1 for a table made before versions
// existed; 0 for none, whatever its version table says (the table was
// dropped by hand).
func Version(ctx context.Context, q Querier, table string) (int, error) {
	v, _, err := version(ctx, q, table)
	return v, err
}

// version reads the version, and whether it is recorded in the version
// table (false for a table made before versions, or none).
func version(ctx context.Context, q Querier, table string) (int, bool, error) {
	var out, mig sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT to_regclass($1)::text, to_regclass($2)::text", table, Migrations(table)).Scan(&out, &mig); err != nil {
		return 0, false, fmt.Errorf("read the version of outbox %s: %w", table, err)
	}
	if !out.Valid {
		return 0, false, nil
	}
	if mig.Valid {
		var v sql.NullInt64
		if err := q.QueryRowContext(ctx, "SELECT max(version) FROM "+Migrations(table)).Scan(&v); err != nil {
			return 0, false, fmt.Errorf("read the version of outbox %s: %w", table, err)
		}
		if v.Valid {
			return int(v.Int64), true, nil
		}
	}
	return 1, false, nil
}

// Status lists Steps with the time each was applied to the outbox table
// named table in db, and returns its version.
func Status(ctx context.Context, db *sql.DB, table string) ([]Applied, int, error) {
	if err := checkNames(table); err != nil {
		return nil, 0, err
	}
	v, recorded, err := version(ctx, db, table)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Applied, len(Steps))
	for i, s := range Steps {
		out[i].Step = s
	}
	if !recorded {
		return out, v, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT version, applied_at FROM "+Migrations(table))
	if err != nil {
		return nil, 0, fmt.Errorf("read the versions of outbox %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var n int
		var at time.Time
		if err := rows.Scan(&n, &at); err != nil {
			return nil, 0, err
		}
		if n >= 1 && n <= len(out) {
			out[n-1].AppliedAt = at
		}
	}
	return out, v, rows.Err()
}

// Migrate moves the schema of the outbox table named table in db to
// version to (0 drops it all, len(Steps) is the latest), running the ups
// or downs in between in one transaction that holds an advisory lock on
// the table's name: two migrators at once run one after the other, and
// the second finds nothing to do. A table made before versions existed
// is recorded as version 1 first. A down whose Loses counts rows fails,
// wrapping ErrWouldLose, unless force. It returns the version the
// table was at.
func Migrate(ctx context.Context, db *sql.DB, table string, to int, force bool) (from int, err error) {
	if err := checkNames(table); err != nil {
		return 0, err
	}
	if to < 0 || to > len(Steps) {
		return 0, fmt.Errorf("migrate outbox %s: no version %d: the versions are 0 to %d", table, to, len(Steps))
	}
	r := names(table)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	defer func() { _ = tx.Rollback() }()
	// The key of the unversioned Migrate's lock, which an older deploy may
	// still take.
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "jobgen.outbox."+table); err != nil {
		return 0, fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	from, recorded, err := version(ctx, tx, table)
	if err != nil {
		return 0, err
	}
	if from > len(Steps) {
		return from, fmt.Errorf("migrate outbox %s: the table is at version %d, newer than this code knows (%d): run a newer outbox:migrate", table, from, len(Steps))
	}
	exec := func(what, stmt string) error {
		if _, err := tx.ExecContext(ctx, r.Replace(stmt)); err != nil {
			return fmt.Errorf("migrate outbox %s: %s: %w", table, what, err)
		}
		return nil
	}
	if from == to && (recorded || from == 0) {
		return from, nil
	}
	if err := exec("version table", versionTable); err != nil {
		return from, err
	}
	if from == 0 { // the rows of a table dropped by hand, if any
		if err := exec("forget the versions of a dropped table", "DELETE FROM {{migrations}}"); err != nil {
			return from, err
		}
	}
	if from == 1 && !recorded {
		if err := exec("record version 1", "INSERT INTO {{migrations}} (version, name) VALUES (1, 'found: made before versions')"); err != nil {
			return from, err
		}
	}
	for v := from + 1; v <= to; v++ {
		s := Steps[v-1]
		if err := exec(fmt.Sprintf("version %d up", v), s.Up); err != nil {
			return from, err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+Migrations(table)+" (version, name) VALUES ($1, $2)", v, s.Name); err != nil {
			return from, fmt.Errorf("migrate outbox %s: record version %d: %w", table, v, err)
		}
	}
	for v := from; v > to; v-- {
		s := Steps[v-1]
		if s.Loses != "" && !force {
			var n int64
			if err := tx.QueryRowContext(ctx, r.Replace(s.Loses)).Scan(&n); err != nil {
				return from, fmt.Errorf("migrate outbox %s: count what version %d down loses: %w", table, v, err)
			}
			if n > 0 {
				return from, fmt.Errorf("migrate outbox %s: version %d down (%s) would lose %d rows: %w; relay or wait for them, or force it", table, v, s.Name, n, ErrWouldLose)
			}
		}
		if err := exec(fmt.Sprintf("version %d down", v), s.Down); err != nil {
			return from, err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+Migrations(table)+" WHERE version = $1", v); err != nil {
			return from, fmt.Errorf("migrate outbox %s: forget version %d: %w", table, v, err)
		}
	}
	if to == 0 {
		if err := exec("drop the version table", "DROP TABLE {{migrations}}"); err != nil {
			return from, err
		}
	}
	if err := tx.Commit(); err != nil {
		return from, fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	return from, nil
}

// checkNames checks table's name and the names beside it.
func checkNames(table string) error {
	if err := CheckTable(table); err != nil {
		return err
	}
	return CheckRelays(table)
}

// UpFor returns s's up with the names of the outbox table named table.
func (s Step) UpFor(table string) string { return names(table).Replace(s.Up) }
