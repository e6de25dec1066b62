// Package sqlmigrate moves a PostgreSQL schema of jobgen's (the outbox,
// the failed store in SQL) up and down a list of versions, each an up
// and a down, and records the versions applied in a version table:
// one row per version, with the time it was applied. Each move is one
// transaction holding a transaction-level advisory lock, so two
// migrators at once run one after the other. It takes table names and
// statements, and imports nothing from runtime.
package sqlmigrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Step is one version of a schema.
type Step struct {
	// Version is the version the schema is at once Up has run: 1, 2, ...
	Version int
	// Name says what the version brings, for the status.
	Name string
	// Up and Down are the statements, with names for Schema.Names to
	// fill in.
	Up, Down string
	// Loses, if set, is a statement counting what Down would lose: rows
	// waiting, say. Migrate refuses a down it counts anything for,
	// unless forced.
	Loses string
}

// Schema is a list of versions over one main table.
type Schema struct {
	// What names the schema in errors: "outbox", "failed jobs table".
	What string
	// Table is the main table: the schema is at version 0 without it,
	// and at version 1 when it exists without a version table (made
	// before versions were recorded).
	Table string
	// Versions is the version table's name.
	Versions string
	// Lock is the key of the advisory lock a move holds.
	Lock string
	// Steps are the versions, in order, the first being 1.
	Steps []Step
	// Names fills in the names of Steps' statements.
	Names *strings.Replacer
}

// ErrWouldLose is wrapped by Migrate's error when a down would drop rows
// and force is not set.
var ErrWouldLose = errors.New("the down would lose rows")

// Applied is one version and when it was applied: zero for one that is
// not, or that was applied before versions were recorded.
type Applied struct {
	Step
	AppliedAt time.Time
}

// Querier reads one row: *sql.DB, *sql.Tx and *sql.Conn are ones.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// versionTable creates the version table.
const versionTable = `CREATE TABLE IF NOT EXISTS %s (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
`

// Version reads the schema's version in q: the highest of its version
// table; 1 for a main table made before versions were recorded; 0
// without the main table, whatever the version table says (the table
// was dropped by hand).
func (s Schema) Version(ctx context.Context, q Querier) (int, error) {
	v, _, err := s.version(ctx, q)
	return v, err
}

// version reads the version, and whether it is recorded in the version
// table.
func (s Schema) version(ctx context.Context, q Querier) (int, bool, error) {
	var main, mig sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT to_regclass($1)::text, to_regclass($2)::text", s.Table, s.Versions).Scan(&main, &mig); err != nil {
		return 0, false, fmt.Errorf("read the version of %s %s: %w", s.What, s.Table, err)
	}
	if !main.Valid {
		return 0, false, nil
	}
	if mig.Valid {
		var v sql.NullInt64
		if err := q.QueryRowContext(ctx, "SELECT max(version) FROM "+s.Versions).Scan(&v); err != nil {
			return 0, false, fmt.Errorf("read the version of %s %s: %w", s.What, s.Table, err)
		}
		if v.Valid {
			return int(v.Int64), true, nil
		}
	}
	return 1, false, nil
}

// Status lists Steps with the time each was applied, and returns the
// schema's version.
func (s Schema) Status(ctx context.Context, db *sql.DB) ([]Applied, int, error) {
	v, recorded, err := s.version(ctx, db)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Applied, len(s.Steps))
	for i, st := range s.Steps {
		out[i].Step = st
	}
	if !recorded {
		return out, v, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT version, applied_at FROM "+s.Versions)
	if err != nil {
		return nil, 0, fmt.Errorf("read the versions of %s %s: %w", s.What, s.Table, err)
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

// Migrate moves the schema in db to version to (0 drops it all,
// len(Steps) is the latest), running the ups or downs in between in one
// transaction that holds the advisory lock: two migrators at once run
// one after the other, and the second finds nothing to do. A main table
// made before versions were recorded is recorded as version 1 first. A
// down whose Loses counts rows fails, wrapping ErrWouldLose, unless
// force. It returns the version the schema was at.
func (s Schema) Migrate(ctx context.Context, db *sql.DB, to int, force bool) (from int, err error) {
	if to < 0 || to > len(s.Steps) {
		return 0, fmt.Errorf("migrate %s %s: no version %d: the versions are 0 to %d", s.What, s.Table, to, len(s.Steps))
	}
	fail := func(what string, err error) error {
		return fmt.Errorf("migrate %s %s: %s: %w", s.What, s.Table, what, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fail("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", s.Lock); err != nil {
		return 0, fail("lock", err)
	}
	from, recorded, err := s.version(ctx, tx)
	if err != nil {
		return 0, err
	}
	if from > len(s.Steps) {
		return from, fmt.Errorf("migrate %s %s: it is at version %d, newer than this code knows (%d): run a newer migrate", s.What, s.Table, from, len(s.Steps))
	}
	if from == to && (recorded || from == 0) {
		return from, nil
	}
	exec := func(what, stmt string, args ...any) error {
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fail(what, err)
		}
		return nil
	}
	if err := exec("version table", fmt.Sprintf(versionTable, s.Versions)); err != nil {
		return from, err
	}
	switch {
	case from == 0: // the rows of a main table dropped by hand, if any
		if err := exec("forget the versions of a dropped table", "DELETE FROM "+s.Versions); err != nil {
			return from, err
		}
	case from == 1 && !recorded:
		if err := exec("record version 1", "INSERT INTO "+s.Versions+" (version, name) VALUES (1, 'found: made before versions')"); err != nil {
			return from, err
		}
	}
	for v := from + 1; v <= to; v++ {
		st := s.Steps[v-1]
		if err := exec(fmt.Sprintf("version %d up", v), s.Names.Replace(st.Up)); err != nil {
			return from, err
		}
		if err := exec(fmt.Sprintf("record version %d", v), "INSERT INTO "+s.Versions+" (version, name) VALUES ($1, $2)", v, st.Name); err != nil {
			return from, err
		}
	}
	for v := from; v > to; v-- {
		st := s.Steps[v-1]
		if st.Loses != "" && !force {
			var n int64
			if err := tx.QueryRowContext(ctx, s.Names.Replace(st.Loses)).Scan(&n); err != nil {
				return from, fail(fmt.Sprintf("count what version %d down loses", v), err)
			}
			if n > 0 {
				return from, fmt.Errorf("migrate %s %s: version %d down (%s) would lose %d rows: %w; relay or wait for them, or force it", s.What, s.Table, v, st.Name, n, ErrWouldLose)
			}
		}
		if err := exec(fmt.Sprintf("version %d down", v), s.Names.Replace(st.Down)); err != nil {
			return from, err
		}
		if err := exec(fmt.Sprintf("forget version %d", v), "DELETE FROM "+s.Versions+" WHERE version = $1", v); err != nil {
			return from, err
		}
	}
	if to == 0 {
		if err := exec("drop the version table", "DROP TABLE "+s.Versions); err != nil {
			return from, err
		}
	}
	if err := tx.Commit(); err != nil {
		return from, fail("commit", err)
	}
	return from, nil
}

// DDL returns the statements that take the schema from nothing to the
// latest version and record each version in the version table, for an
// application that runs its own migrations.
func (s Schema) DDL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- The versions of %s %s applied (outbox:migrate --status, failed:migrate --status).\n", s.What, s.Table)
	fmt.Fprintf(&b, versionTable, s.Versions)
	for _, st := range s.Steps {
		fmt.Fprintf(&b, "\n-- Version %d: %s.\n", st.Version, st.Name)
		b.WriteString(s.Names.Replace(st.Up))
		fmt.Fprintf(&b, "\nINSERT INTO %s (version, name) VALUES (%d, '%s') ON CONFLICT DO NOTHING;\n", s.Versions, st.Version, strings.ReplaceAll(st.Name, "'", "''"))
	}
	return b.String()
}
