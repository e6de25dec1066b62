// Package outboxsql is the outbox table's schema and every statement
// run on it: the DDL (outbox.sql), the INSERT that runtime's DispatchTx
// writes rows with, and the claim, delete, park and count statements of
// package outbox's relay. The SQL is PostgreSQL's. It takes table names
// and plain values, and imports nothing from runtime.
package outboxsql

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultTable is the outbox table's name when none is configured.
const DefaultTable = "jobgen_outbox"

// The kinds of outbox rows.
const (
	// KindJob is a row whose payload is a job's stored envelope, as
	// Dispatch pushes it.
	KindJob = "job"
	// KindBatch is a row whose payload is a batch's record and its jobs.
	KindBatch = "batch"
)

//go:embed outbox.sql
var ddl string

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$`)

// CheckTable checks that table is a plain, lower-case name, optionally
// with its schema: the statements name it unquoted. The error names the
// table and wraps no sentinel: callers add their own.
func CheckTable(table string) error {
	if !tableName.MatchString(table) {
		return fmt.Errorf("%q must be a lower-case SQL name (letters, digits, _), optionally schema.table", table)
	}
	return nil
}

// DDL returns the statements that create the outbox table named table,
// its index, trigger and notify function (outbox.sql), and its relays
// table (relays.sql).
func DDL(table string) (string, error) {
	if err := CheckTable(table); err != nil {
		return "", err
	}
	if err := CheckRelays(table); err != nil {
		return "", err
	}
	name := table[strings.LastIndexByte(table, '.')+1:]
	return strings.NewReplacer("{{table}}", table, "{{channel}}", Channel(table), "{{name}}", name).Replace(ddl) + "\n" + RelaysDDL(table), nil
}

// Channel is the channel the trigger of the outbox table named table
// notifies: the name with "." as "_".
func Channel(table string) string { return strings.ReplaceAll(table, ".", "_") }

// Migrate runs the DDL of table in db, in a transaction that holds an
// advisory lock on the table's name, so that two processes may run it at
// once. Every statement is safe to run again.
func Migrate(ctx context.Context, db *sql.DB, table string) error {
	ddl, err := DDL(table)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "jobgen.outbox."+table); err != nil {
		return fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate outbox %s: %w", table, err)
	}
	return nil
}

// Execer runs a statement: *sql.Tx, *sql.DB and *sql.Conn are ones, and
// so is runtime.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Row is one row Insert writes.
type Row struct {
	ID, Kind, Connection, Queue, Name string
	DelayMS                           int64
	UniqueKey                         string
	UniqueForMS                       int64
	Payload                           []byte
}

// columns are the columns Insert writes, in Row's order.
const columns = "id, kind, connection, queue, name, delay_ms, unique_key, unique_for_ms, payload"

const arity = 9

// InsertRows is the most rows one INSERT writes: PostgreSQL takes up to
// 65535 parameters.
const InsertRows = 1000

// Insert writes rows into table through tx, in one INSERT per InsertRows
// rows.
func Insert(ctx context.Context, tx Execer, table string, rows []Row) error {
	if tx == nil {
		return errors.New("outbox: nil transaction")
	}
	for s := 0; s < len(rows); s += InsertRows {
		chunk := rows[s:min(s+InsertRows, len(rows))]
		var q strings.Builder
		q.Grow(64 + len(chunk)*48)
		q.WriteString("INSERT INTO ")
		q.WriteString(table)
		q.WriteString(" (" + columns + ") VALUES ")
		args := make([]any, 0, len(chunk)*arity)
		for i, r := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('(')
			for c := range arity {
				if c > 0 {
					q.WriteByte(',')
				}
				q.WriteByte('$')
				q.WriteString(strconv.Itoa(i*arity + c + 1))
			}
			q.WriteByte(')')
			args = append(args, r.ID, r.Kind, r.Connection, r.Queue, r.Name, r.DelayMS, r.UniqueKey, r.UniqueForMS, r.Payload)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("write to outbox %s: %w", table, err)
		}
	}
	return nil
}

// Claim is the statement that locks and reads up to batch waiting rows
// of the given connections, oldest first, skipping rows another claim
// holds. Its columns are seq, id, kind, connection, queue, name, the
// delay left in ms, counted from the commit (committedAt), unique_key,
// unique_for_ms, payload, and a column to ignore: the claim also ends
// the transaction should it stay idle for idle (set_config, local to
// the transaction).
func Claim(table string, connections []string, batch int, idle time.Duration) string {
	names := make([]string, len(connections))
	for i, c := range connections {
		names[i] = quote(c)
	}
	return "SELECT seq, id, kind, connection, queue, name, " +
		"GREATEST(0, delay_ms - FLOOR(EXTRACT(EPOCH FROM (clock_timestamp() - " + committedAt + ")) * 1000))::bigint, " +
		"unique_key, unique_for_ms, payload, " +
		"(SELECT set_config('idle_in_transaction_session_timeout', '" + strconv.FormatInt(idle.Milliseconds(), 10) + "', true)) FROM " + table +
		" WHERE error IS NULL AND connection IN (" + strings.Join(names, ",") + ")" +
		" ORDER BY seq LIMIT " + strconv.Itoa(batch) + " FOR UPDATE SKIP LOCKED"
}

// committedAt is the SQL for when the row's transaction committed, or a
// time no earlier: with track_commit_timestamp on, the commit's own time
// (pg_xact_commit_timestamp of the row's xmin, NULL for a transaction
// older than the setting); otherwise, and then, clock_timestamp(), the
// moment the claim reads the row, which a claim can do only after the
// commit. A delay is counted from it, so a delayed job never runs before
// its delay has passed since the commit; created_at, the transaction's
// start, would count the transaction's own time against the delay.
const committedAt = "COALESCE(CASE WHEN current_setting('track_commit_timestamp') = 'on' " +
	"THEN pg_xact_commit_timestamp(xmin) END, clock_timestamp())"

// Delete is the statement that deletes the rows whose seq are in $1, a
// PostgreSQL array literal of them ("{1,2,3}"): one text whatever the
// rows, so that drivers that prepare statements prepare it once.
func Delete(table string) string {
	return "DELETE FROM " + table + " WHERE seq = ANY($1::text::bigint[])"
}

// Park is the statement that sets the error ($1) of the row whose seq is
// $2, which claims then leave alone.
func Park(table string) string { return "UPDATE " + table + " SET error = $1 WHERE seq = $2" }

// Backlog is the statement that counts the rows and the parked rows, and
// reads the oldest row's created_at in Unix ms (NULL if none).
func Backlog(table string) string {
	return "SELECT count(*), count(*) FILTER (WHERE error IS NOT NULL), " +
		"(EXTRACT(EPOCH FROM min(created_at)) * 1000)::bigint FROM " + table
}

// Present is the statement that reads which of ids have a row.
func Present(table string, ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = quote(id)
	}
	return "SELECT id FROM " + table + " WHERE id IN (" + strings.Join(q, ",") + ")"
}

// quote quotes s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
