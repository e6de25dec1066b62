package failedsql

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
	"github.com/jobgen/jobgen/internal/sqlmigrate"
	"github.com/jobgen/jobgen/runtime"
)

// DefaultTable is the table's name when Config.Table is empty.
const DefaultTable = "jobgen_failed_jobs"

//go:embed failed_jobs.sql
var ddl string

// Config configures a Store.
type Config struct {
	// DB is the PostgreSQL database holding the table: the outbox's, for
	// one. Required.
	DB *sql.DB
	// Table is the table's name: a lower-case SQL name, optionally
	// schema.table. Default DefaultTable, "jobgen_failed_jobs".
	Table string
}

// Store is a failed store in a PostgreSQL table: a
// runtime.FailedBackend, for runtime.EngineConfig.FailedStore. It is
// safe for concurrent use.
type Store struct {
	db    *sql.DB
	table string
}

var _ runtime.FailedBackend = (*Store)(nil)

// New returns the store cfg describes. It does not touch the database:
// Migrate creates the table.
func New(cfg Config) (*Store, error) {
	if cfg.DB == nil {
		return nil, fmt.Errorf("%w: failedsql.Config.DB is required: the PostgreSQL database to keep failed jobs in", runtime.ErrInvalid)
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	if err := outboxsql.CheckTable(cfg.Table); err != nil {
		return nil, fmt.Errorf("%w: failedsql.Config.Table %w", runtime.ErrInvalid, err)
	}
	return &Store{db: cfg.DB, table: cfg.Table}, nil
}

// String names the store: "PostgreSQL table <name>".
func (s *Store) String() string {
	if s == nil {
		return "failedsql.Store(nil)"
	}
	return "PostgreSQL table " + s.table
}

// Table returns the table's name.
func (s *Store) Table() string { return s.table }

// Steps are the versions of the table's schema, as the outbox's
// (internal/sqlmigrate): version 1 is what Migrate made before versions
// were recorded, so a table made then is at version 1. Adding a version
// is adding its entry here.
var Steps = []sqlmigrate.Step{
	{Version: 1, Name: "failed jobs table, its index", Up: ddl, Down: "DROP TABLE IF EXISTS {{table}};\n",
		Loses: "SELECT count(*) FROM {{table}}"},
}

// schema is the table's schema, its versions recorded in
// <table>_migrations.
func (s *Store) schema() sqlmigrate.Schema {
	name := s.table[strings.LastIndexByte(s.table, '.')+1:]
	return sqlmigrate.Schema{What: "failed jobs table", Table: s.table, Versions: s.table + "_migrations",
		Lock: "jobgen.failed." + s.table, Steps: Steps,
		Names: strings.NewReplacer("{{table}}", s.table, "{{name}}", name)}
}

// DDL returns the statements that take the table from nothing to the
// latest version of its schema, and record each version in its version
// table, for an application that runs its own migrations.
func (s *Store) DDL() string { return s.schema().DDL() }

// Migrate brings the table to the latest version of its schema, creating
// it if need be, in one transaction that holds an advisory lock on the
// table's name, so that two processes may run it at once. A table made
// before versions were recorded is version 1.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateTo(ctx, len(Steps), false)
	return err
}

// MigrateTo moves the table's schema up or down to version: 0 drops the
// table and its version table. A down that would drop failed jobs fails,
// wrapping ErrWouldLose, unless force. It returns the version the table
// was at.
func (s *Store) MigrateTo(ctx context.Context, version int, force bool) (from int, err error) {
	return s.schema().Migrate(ctx, s.db, version, force)
}

// Migration is one version of the table's schema, and when it was
// applied: zero if it is not, or if the table was made before versions
// were recorded.
type Migration struct {
	Version   int
	Name      string
	AppliedAt time.Time
}

// Migrations returns every version of the table's schema, with when each
// was applied, and the version the table is at: 0 without the table.
func (s *Store) Migrations(ctx context.Context) ([]Migration, int, error) {
	steps, v, err := s.schema().Status(ctx, s.db)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Migration, len(steps))
	for i, st := range steps {
		out[i] = Migration{Version: st.Version, Name: st.Name, AppliedAt: st.AppliedAt}
	}
	return out, v, nil
}

// ErrWouldLose is wrapped by MigrateTo's error when a down would drop
// failed jobs and force is not set.
var ErrWouldLose = sqlmigrate.ErrWouldLose

// saveChunk is the most rows of one INSERT: 11 parameters each.
const saveChunk = 500

// Save stores jobs, each once: a job the table holds already under the
// same queue, ID and FailedAt is left as it is.
func (s *Store) Save(ctx context.Context, jobs []runtime.FailedJob) error {
	for from := 0; from < len(jobs); from += saveChunk {
		chunk := jobs[from:min(from+saveChunk, len(jobs))]
		var q strings.Builder
		q.WriteString("INSERT INTO " + s.table + " (uuid, connection, queue, payload, exception, failed_at, name, attempts, errors, cancelled) VALUES ")
		args := make([]any, 0, 10*len(chunk))
		for i, j := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			n := len(args)
			q.WriteString("(")
			for k := 1; k <= 10; k++ {
				if k > 1 {
					q.WriteString(", ")
				}
				q.WriteString("$" + strconv.Itoa(n+k))
				if k == 9 {
					q.WriteString("::jsonb")
				}
			}
			q.WriteString(")")
			errs, err := json.Marshal(orEmpty(j.Errors))
			if err != nil {
				return fmt.Errorf("save failed job %s in %s: %w", j.ID, s.table, err)
			}
			args = append(args, j.ID, "", j.Queue, orEmptyBytes(j.Payload), j.Error, j.FailedAt.UTC(), j.Name, j.Attempts, string(errs), j.Cancelled)
		}
		q.WriteString(" ON CONFLICT (queue, uuid, failed_at) DO NOTHING")
		if _, err := s.db.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("save %d failed jobs in %s: %w", len(chunk), s.table, err)
		}
	}
	return nil
}

func orEmpty(errs []runtime.AttemptError) []runtime.AttemptError {
	if errs == nil {
		return []runtime.AttemptError{}
	}
	return errs
}

func orEmptyBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// columns are the columns a FailedJob is read from, in scan's order.
const columns = "uuid, queue, payload, exception, failed_at, name, attempts, errors::text, cancelled"

// scan reads rows of columns.
func scan(rows *sql.Rows) ([]runtime.FailedJob, error) {
	defer rows.Close()
	var out []runtime.FailedJob
	for rows.Next() {
		var j runtime.FailedJob
		var errs string
		if err := rows.Scan(&j.ID, &j.Queue, &j.Payload, &j.Error, &j.FailedAt, &j.Name, &j.Attempts, &errs, &j.Cancelled); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(errs), &j.Errors); err != nil {
			j.Errors = []runtime.AttemptError{{Attempt: j.Attempts, At: j.FailedAt, Error: "(unreadable errors column: " + err.Error() + ")"}}
		}
		if len(j.Errors) == 0 {
			j.Errors = nil
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Count returns how many failed jobs queue holds.
func (s *Store) Count(ctx context.Context, queue string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+s.table+" WHERE queue = $1", queue).Scan(&n); err != nil {
		return 0, fmt.Errorf("count failed jobs of %q in %s: %w", queue, s.table, err)
	}
	return n, nil
}

// List returns a page of queue's failed jobs, newest first.
func (s *Store) List(ctx context.Context, queue string, offset, limit int) ([]runtime.FailedJob, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+columns+" FROM "+s.table+
		" WHERE queue = $1 ORDER BY failed_at DESC, id DESC OFFSET $2 LIMIT $3", queue, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs of %q in %s: %w", queue, s.table, err)
	}
	jobs, err := scan(rows)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs of %q in %s: %w", queue, s.table, err)
	}
	return jobs, nil
}

// Get returns queue's failed job id, its newest failure should the table
// hold several.
func (s *Store) Get(ctx context.Context, queue, id string) (runtime.FailedJob, bool, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+columns+" FROM "+s.table+
		" WHERE queue = $1 AND uuid = $2 ORDER BY failed_at DESC LIMIT 1", queue, id)
	if err != nil {
		return runtime.FailedJob{}, false, fmt.Errorf("get failed job %s of %q in %s: %w", id, queue, s.table, err)
	}
	jobs, err := scan(rows)
	if err != nil || len(jobs) == 0 {
		return runtime.FailedJob{}, false, err
	}
	return jobs[0], true, nil
}

// UpTo returns the IDs of queue's failed jobs that failed at or before
// upTo, oldest first, skipping offset of them, at most limit.
func (s *Store) UpTo(ctx context.Context, queue string, upTo time.Time, offset, limit int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT uuid FROM "+s.table+
		" WHERE queue = $1 AND failed_at <= $2 ORDER BY failed_at, id OFFSET $3 LIMIT $4", queue, upTo.UTC(), offset, limit)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs of %q in %s: %w", queue, s.table, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// idsIn is the condition "uuid is one of $n", given ids as a JSON array:
// one statement text whatever the number of IDs, through any driver.
func idsIn(n int) string {
	return "uuid IN (SELECT jsonb_array_elements_text($" + strconv.Itoa(n) + "::jsonb))"
}

func jsonIDs(ids []string) string {
	b, _ := json.Marshal(ids) // strings always marshal
	return string(b)
}

// Forget deletes queue's failed jobs ids, every failure of each, and
// returns how many rows went.
func (s *Store) Forget(ctx context.Context, queue string, ids []string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	res, err := s.db.ExecContext(ctx, "DELETE FROM "+s.table+" WHERE queue = $1 AND "+idsIn(2), queue, jsonIDs(ids))
	if err != nil {
		return 0, fmt.Errorf("forget failed jobs of %q in %s: %w", queue, s.table, err)
	}
	return res.RowsAffected()
}

// Flush deletes every failed job of queue.
func (s *Store) Flush(ctx context.Context, queue string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM "+s.table+" WHERE queue = $1", queue); err != nil {
		return fmt.Errorf("flush failed jobs of %q in %s: %w", queue, s.table, err)
	}
	return nil
}

// Prune deletes queue's failed jobs that failed more than age ago, by
// the database's clock, and returns how many went.
func (s *Store) Prune(ctx context.Context, queue string, age time.Duration) (int64, error) {
	res, err := s.db.ExecContext(ctx, "DELETE FROM "+s.table+
		" WHERE queue = $1 AND failed_at < now() - $2::bigint * interval '1 millisecond'", queue, age.Milliseconds())
	if err != nil {
		return 0, fmt.Errorf("prune failed jobs of %q in %s: %w", queue, s.table, err)
	}
	return res.RowsAffected()
}

// Retry locks the rows of queue's failed jobs ids, skipping rows another
// Retry holds, has r.Push push their jobs, deletes the rows it pushed
// and commits: a row goes only in the transaction that locked it, after
// Redis took its job. It returns the IDs whose rows went.
func (s *Store) Retry(ctx context.Context, queue string, ids []string, r runtime.FailedRetry) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("retry failed jobs of %q: begin: %w", queue, err)
	}
	defer func() { _ = tx.Rollback() }()
	// A transaction that stalls after its pushes ends by itself, so that
	// another Retry can take the rows.
	if _, err := tx.ExecContext(ctx, "SELECT set_config('idle_in_transaction_session_timeout', $1, true)", strconv.FormatInt(r.Idle.Milliseconds(), 10)); err != nil {
		return nil, fmt.Errorf("retry failed jobs of %q: %w", queue, err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, "+columns+" FROM "+s.table+
		" WHERE queue = $1 AND "+idsIn(2)+" ORDER BY failed_at, id FOR UPDATE SKIP LOCKED", queue, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("retry failed jobs of %q: lock: %w", queue, err)
	}
	var seqs []int64
	var jobs []runtime.FailedJob
	for rows.Next() {
		var seq int64
		var j runtime.FailedJob
		var errs string
		if err := rows.Scan(&seq, &j.ID, &j.Queue, &j.Payload, &j.Error, &j.FailedAt, &j.Name, &j.Attempts, &errs, &j.Cancelled); err != nil {
			rows.Close()
			return nil, fmt.Errorf("retry failed jobs of %q: lock: %w", queue, err)
		}
		seqs, jobs = append(seqs, seq), append(jobs, j)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("retry failed jobs of %q: lock: %w", queue, err)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	pushed, pushErr := r.Push(ctx, jobs)
	var gone []string
	var del []string
	seen := map[string]bool{}
	for i, ok := range pushed {
		if !ok {
			continue
		}
		del = append(del, strconv.FormatInt(seqs[i], 10))
		if !seen[jobs[i].ID] {
			seen[jobs[i].ID] = true
			gone = append(gone, jobs[i].ID)
		}
	}
	if len(del) == 0 {
		return nil, pushErr
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+s.table+" WHERE id = ANY($1::text::bigint[])", "{"+strings.Join(del, ",")+"}"); err != nil {
		return nil, errors.Join(pushErr, fmt.Errorf("retry failed jobs of %q: delete: %w", queue, err))
	}
	if err := tx.Commit(); err != nil {
		return nil, errors.Join(pushErr, fmt.Errorf("retry failed jobs of %q: commit: %w", queue, err))
	}
	return gone, pushErr
}
