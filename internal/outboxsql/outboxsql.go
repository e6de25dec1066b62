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
	// KindWorkflow is a row whose payload is a workflow's plan: its
	// steps, encoded, and its policy, deadline and catch.
	KindWorkflow = "workflow"
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

// DDL returns the statements that take the outbox table named table
// from nothing to the latest version (Steps), and record each version in
// its version table, for an application that runs its own migrations:
// outbox:migrate then finds the table at the latest version.
func DDL(table string) (string, error) {
	if err := checkNames(table); err != nil {
		return "", err
	}
	return schema(table).DDL(), nil
}

// Notify is the statement that wakes the relays of the outbox table
// named table, once the transaction it runs in commits: a pg_notify on
// Channel(table). PostgreSQL commits one notifying transaction at a
// time, so DispatchTx runs it at most once every few ms.
func Notify(table string) string { return "SELECT pg_notify(" + quote(Channel(table)) + ", '')" }

// Channel is the channel Notify notifies for the outbox table named table: the name with "." as "_".
func Channel(table string) string { return strings.ReplaceAll(table, ".", "_") }

// Execer runs a statement: *sql.Tx, *sql.DB and *sql.Conn are ones, and
// so is runtime.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Copier writes rows with PostgreSQL's COPY FROM STDIN: the pgx
// adapter's transaction is one (pgxoutbox.Tx). Insert writes the rows
// of no unique key through it, many at a time.
type Copier interface {
	// CopyRows copies rows, each holding a value per column, into table
	// (schema.name or name), and returns how many it wrote.
	CopyRows(ctx context.Context, table string, columns []string, rows [][]any) (int64, error)
}

// CopyMin is the fewest rows Insert writes with COPY, through a Copier:
// for fewer, one INSERT takes fewer round trips.
const CopyMin = 8

// copyColumns are the columns CopyRows writes, in Row's order, and
// run_at (NULL for a row without At).
var copyColumns = append(strings.Split(strings.ReplaceAll(columns, " ", ""), ","), "run_at")

// Row is one row Insert writes.
type Row struct {
	ID, Kind, Connection, Queue, Name string
	DelayMS                           int64
	UniqueKey                         string
	UniqueForMS                       int64
	Payload                           []byte
	// RunAt, if not zero, is when the job is ready (At), read against the
	// database's clock as a relay claims the row; DelayMS is then 0. It
	// needs version 2 of the schema; rows without one write no run_at, so
	// that they go into a table at version 1 too.
	RunAt time.Time
}

// columns are the columns Insert writes, in Row's order.
const columns = "id, kind, connection, queue, name, delay_ms, unique_key, unique_for_ms, payload"

const arity = 9

// InsertRows is the most rows one INSERT writes. PostgreSQL takes up to
// 65535 parameters, but a statement of 1,000 rows (9,000 parameters)
// wrote 1,000 rows at half the rate of ten statements of 100 on lib/pq
// (BenchmarkInsertForms): its parse and plan grow faster than its rows.
const InsertRows = 100

// Insert writes rows into table through tx, and returns the indexes of
// the unique rows it did not write, because a row of the table that no
// relay has pushed yet holds their connection and unique key (the
// table's unique index, outbox.sql). Rows without a unique key go in one
// INSERT per InsertRows rows; each unique row goes in an INSERT of its
// own, ON CONFLICT DO NOTHING, so that a duplicate neither aborts tx nor
// hides which row it was. Through a Copier, CopyMin or more rows without
// a unique key go in one COPY instead: COPY cannot skip a conflict, and
// they have none to skip. On a table made before the unique index, no
// row is a duplicate here: the relay finds them as it pushes.
func Insert(ctx context.Context, tx Execer, table string, rows []Row) (dup []int, err error) {
	if tx == nil {
		return nil, errors.New("outbox: nil transaction")
	}
	plain := rows
	var unique []int
	for i, r := range rows {
		if r.UniqueKey != "" {
			unique = append(unique, i)
		}
	}
	if len(unique) > 0 {
		plain = make([]Row, 0, len(rows)-len(unique))
		for _, r := range rows {
			if r.UniqueKey == "" {
				plain = append(plain, r)
			}
		}
	}
	if c, ok := tx.(Copier); ok && len(plain) >= CopyMin {
		if err := copyRows(ctx, c, table, plain); err != nil {
			return nil, err
		}
		plain = nil
	}
	for s := 0; s < len(plain); s += InsertRows {
		if _, err := insert(ctx, tx, table, plain[s:min(s+InsertRows, len(plain))], ""); err != nil {
			return nil, err
		}
	}
	for _, i := range unique {
		n, err := insert(ctx, tx, table, rows[i:i+1], " ON CONFLICT DO NOTHING")
		if err != nil {
			return nil, err
		}
		if n == 0 {
			dup = append(dup, i)
		}
	}
	return dup, nil
}

// copyRows writes rows through c's COPY.
func copyRows(ctx context.Context, c Copier, table string, rows []Row) error {
	vals := make([][]any, len(rows))
	for i, r := range rows {
		var runAt any
		if !r.RunAt.IsZero() {
			runAt = r.RunAt
		}
		vals[i] = []any{r.ID, r.Kind, r.Connection, r.Queue, r.Name, r.DelayMS, r.UniqueKey, r.UniqueForMS, r.Payload, runAt}
	}
	n, err := c.CopyRows(ctx, table, copyColumns, vals)
	if err != nil {
		return fmt.Errorf("write to outbox %s: copy: %w", table, err)
	}
	if n != int64(len(rows)) {
		return fmt.Errorf("write to outbox %s: copy wrote %d rows of %d", table, n, len(rows))
	}
	return nil
}

// insert writes chunk in one INSERT, followed by tail, and returns how
// many rows it wrote. The run_at column is written only when a row of
// chunk has a RunAt.
func insert(ctx context.Context, tx Execer, table string, chunk []Row, tail string) (int64, error) {
	n := arity
	for _, r := range chunk {
		if !r.RunAt.IsZero() {
			n = arity + 1
			break
		}
	}
	var q strings.Builder
	q.Grow(64 + len(chunk)*48)
	q.WriteString("INSERT INTO ")
	q.WriteString(table)
	if n > arity {
		q.WriteString(" (" + columns + ", run_at) VALUES ")
	} else {
		q.WriteString(" (" + columns + ") VALUES ")
	}
	args := make([]any, 0, len(chunk)*n)
	for i, r := range chunk {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteByte('(')
		for c := range n {
			if c > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('$')
			q.WriteString(strconv.Itoa(i*n + c + 1))
		}
		q.WriteByte(')')
		args = append(args, r.ID, r.Kind, r.Connection, r.Queue, r.Name, r.DelayMS, r.UniqueKey, r.UniqueForMS, r.Payload)
		if n > arity {
			var at any // NULL: the row's delay counts from the commit
			if !r.RunAt.IsZero() {
				at = r.RunAt
			}
			args = append(args, at)
		}
	}
	q.WriteString(tail)
	res, err := tx.ExecContext(ctx, q.String(), args...)
	if err != nil {
		return 0, fmt.Errorf("write to outbox %s: %w", table, err)
	}
	if res == nil {
		return int64(len(chunk)), nil
	}
	written, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("write to outbox %s: rows written: %w", table, err)
	}
	return written, nil
}

// Querier reads one row: *sql.Tx, *sql.DB and *sql.Conn are ones.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Holder returns the ID of the row of table, not parked, that holds the
// unique key of connection; "" if tx sees none.
func Holder(ctx context.Context, tx Querier, table, connection, key string) (string, error) {
	var id string
	err := tx.QueryRowContext(ctx, "SELECT id FROM "+table+" WHERE connection = $1 AND unique_key = $2 AND error IS NULL LIMIT 1", connection, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// Claim is the statement that locks and reads up to batch waiting rows
// of the given connections, oldest first, skipping rows another claim
// holds. Its columns are seq, id, kind, connection, queue, name, the
// delay left in ms (until run_at by the database's clock, for a row of
// At; else counted from the commit, sinceCommit), unique_key,
// unique_for_ms, payload, and a column to ignore: the claim also ends
// the transaction should it stay idle for idle (set_config, local to
// the transaction).
func Claim(table string, connections []string, batch int, idle time.Duration) string {
	names := make([]string, len(connections))
	for i, c := range connections {
		names[i] = quote(c)
	}
	return "SELECT seq, id, kind, connection, queue, name, " +
		"(CASE WHEN run_at IS NOT NULL THEN " + untilRunAt + " ELSE delay_ms - LEAST(delay_ms, GREATEST(0, " + sinceCommit + ")) END)::bigint, " +
		"unique_key, unique_for_ms, payload, " +
		"(SELECT set_config('idle_in_transaction_session_timeout', '" + strconv.FormatInt(idle.Milliseconds(), 10) + "', true)) FROM " + table +
		" WHERE error IS NULL AND connection IN (" + strings.Join(names, ",") + ")" +
		" ORDER BY seq LIMIT " + strconv.Itoa(batch) + " FOR UPDATE SKIP LOCKED"
}

// Waiting is the statement that reads whether any row of the given
// connections waits to be claimed: one cheap read, which a relay makes
// before it claims while it keeps claiming at a short cooldown.
func Waiting(table string, connections []string) string {
	names := make([]string, len(connections))
	for i, c := range connections {
		names[i] = quote(c)
	}
	return "SELECT EXISTS (SELECT 1 FROM " + table + " WHERE error IS NULL AND connection IN (" + strings.Join(names, ",") + "))"
}

// sinceCommit is the SQL for the ms since the row's transaction
// committed, or fewer: with track_commit_timestamp on, since the
// commit's own time (pg_xact_commit_timestamp of the row's xmin; 0 for a
// transaction older than the setting); otherwise 0, as if it committed
// the moment the claim reads it, which a claim can do only after the
// commit. A delay is counted from the commit so, and a delayed job never
// runs before its delay has passed since the commit; created_at, the
// transaction's start, counted the transaction's own time against it.
const sinceCommit = "CASE WHEN current_setting('track_commit_timestamp') = 'on' " +
	"THEN COALESCE(FLOOR(EXTRACT(EPOCH FROM (clock_timestamp() - pg_xact_commit_timestamp(xmin))) * 1000), 0) ELSE 0 END"

// untilRunAt is the SQL for the ms from now, by the database's clock,
// until the row's run_at; 0 for one already past.
const untilRunAt = "GREATEST(0, CEIL(EXTRACT(EPOCH FROM (run_at - clock_timestamp())) * 1000))"

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
