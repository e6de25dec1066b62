package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/outboxsql"
)

// Tx is the SQL transaction DispatchTx writes jobs into: *sql.Tx is one.
// So are *sql.DB and *sql.Conn, outside any transaction. The pgx adapter,
// module github.com/jobgen/jobgen/outbox/pgxoutbox, makes a pgx.Tx one.
//
// The outbox is PostgreSQL's: the statements use $1 placeholders, and the
// relay claims rows with FOR UPDATE SKIP LOCKED (docs/outbox.md).
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// TxDispatcher writes dispatches into an SQL transaction's outbox, for a
// relay to push once the transaction commits: *Engine is one. A fake
// dispatcher may record them instead.
type TxDispatcher interface {
	DispatchTx(ctx context.Context, tx Tx, p *PendingDispatch) (id string, err error)
}

// DefaultOutboxTable is the outbox table's name when
// EngineConfig.OutboxTable is empty.
const DefaultOutboxTable = outboxsql.DefaultTable

// checkOutboxTable checks that table is a plain, lower-case name,
// optionally with its schema: the outbox's statements name it unquoted.
func checkOutboxTable(table string) error {
	if err := outboxsql.CheckTable(table); err != nil {
		return fmt.Errorf("%w: EngineConfig.OutboxTable %w", ErrInvalid, err)
	}
	return nil
}

// OutboxDDL returns the statements that take the outbox table named
// table from nothing to the latest version of its schema, and record
// each version in its version table (<table>_migrations), for PostgreSQL:
// for an application that runs its own migrations. MigrateOutbox runs
// the same versions.
func OutboxDDL(table string) (string, error) {
	if err := checkOutboxTable(table); err != nil {
		return "", err
	}
	return outboxsql.DDL(table)
}

// OutboxChannel is the channel DispatchTx notifies to wake the relays of
// the outbox table named table (OutboxNotifyEvery), for a relay's
// LISTEN: the name with "." as "_".
func OutboxChannel(table string) string { return outboxsql.Channel(table) }

// OutboxSchemaVersion is the version of the outbox's schema this code
// needs, and the latest it knows: CheckOutbox, and so a relay's start,
// refuses a table at an older one.
const OutboxSchemaVersion = outboxsql.Need

// ErrOutboxWouldLose is wrapped by MigrateOutboxTo's error when a down
// would drop rows (jobs waiting to be relayed, completions) and force is
// not set.
var ErrOutboxWouldLose = outboxsql.ErrWouldLose

// MigrateOutbox brings the outbox table named table (DefaultOutboxTable
// if empty) in db to the latest version of its schema
// (OutboxSchemaVersion), creating it if need be. It is safe to run twice,
// and from two processes at once: it holds a transaction-level advisory
// lock while it runs, and runs every version in that one transaction. A
// table made before versions existed (v0.1) is version 1.
func MigrateOutbox(ctx context.Context, db *sql.DB, table string) error {
	_, err := MigrateOutboxTo(ctx, db, table, OutboxSchemaVersion, false)
	return err
}

// MigrateOutboxTo moves the schema of the outbox table named table
// (DefaultOutboxTable if empty) in db up or down to version: 0 drops the
// table, its relays and version tables. A down that would drop rows
// (jobs waiting, an At's time, completions) fails, wrapping
// ErrOutboxWouldLose, unless force. It returns the version the table
// was at. Like MigrateOutbox, it is one transaction under an advisory
// lock.
func MigrateOutboxTo(ctx context.Context, db *sql.DB, table string, version int, force bool) (from int, err error) {
	table = cmpOr(table, DefaultOutboxTable)
	if err := checkOutboxTable(table); err != nil {
		return 0, err
	}
	if db == nil {
		return 0, fmt.Errorf("%w: migrate outbox %s: the database is nil", ErrInvalid, table)
	}
	return outboxsql.Migrate(ctx, db, table, version, force)
}

// OutboxMigration is one version of the outbox's schema.
type OutboxMigration struct {
	// Version is the schema's version once it is applied.
	Version int
	// Name says what it brings.
	Name string
	// AppliedAt is when it was applied to the table, by the database's
	// clock; zero if it is not, or if the table was made before versions
	// existed (version 1, unrecorded).
	AppliedAt time.Time
}

// OutboxMigrations returns every version of the outbox's schema, with
// when each was applied to the outbox table named table (DefaultOutboxTable
// if empty) in db, and the version the table is at: 0 without one.
func OutboxMigrations(ctx context.Context, db *sql.DB, table string) ([]OutboxMigration, int, error) {
	table = cmpOr(table, DefaultOutboxTable)
	if err := checkOutboxTable(table); err != nil {
		return nil, 0, err
	}
	if db == nil {
		return nil, 0, fmt.Errorf("%w: outbox %s: the database is nil", ErrInvalid, table)
	}
	steps, v, err := outboxsql.Status(ctx, db, table)
	if err != nil {
		return nil, 0, err
	}
	out := make([]OutboxMigration, len(steps))
	for i, s := range steps {
		out[i] = OutboxMigration{Version: s.Version, Name: s.Name, AppliedAt: s.AppliedAt}
	}
	return out, v, nil
}

// DispatchTx writes job, with its annotated options, into tx's outbox, and
// returns its ID. The job exists if and only if tx commits: a relay
// (outbox.Relay, queue:relay) then pushes it to Redis, once.
func DispatchTx(ctx context.Context, tx Tx, job Job) (string, error) {
	if c, ok := job.(*PendingChain); ok {
		return c.DispatchTx(ctx, tx)
	}
	return NewPendingDispatch(job).DispatchTx(ctx, tx)
}

// DispatchTx writes the job into tx's outbox through the dispatcher of
// its connection, which must be a TxDispatcher (an *Engine is), and
// returns its ID. The job is pushed to Redis once tx commits.
func (p *PendingDispatch) DispatchTx(ctx context.Context, tx Tx) (string, error) {
	d, err := DispatcherFor(ctx, p.Connection())
	if err != nil {
		return "", err
	}
	td, ok := d.(TxDispatcher)
	if !ok {
		return "", fmt.Errorf("%w: dispatch %s in a transaction: the dispatcher %T has no outbox", ErrInvalid, p.JobName(), d)
	}
	return td.DispatchTx(ctx, tx, p)
}

// DispatchTx writes the chain's first job, carrying the rest, into tx's
// outbox, and returns its ID.
func (c *PendingChain) DispatchTx(ctx context.Context, tx Tx) (string, error) {
	p, err := c.pending()
	if err != nil {
		return "", err
	}
	return p.DispatchTx(ctx, tx)
}

// DispatchManyTx writes jobs into tx's outbox, and returns their IDs:
// through a pgx transaction (pgxoutbox.Tx) in one COPY, through
// database/sql in one INSERT per 100 jobs; unique jobs one INSERT each.
func DispatchManyTx[T Job](ctx context.Context, tx Tx, jobs []T) ([]string, error) {
	return NewPendingMany(jobs).DispatchTx(ctx, tx)
}

// DispatchTx writes the jobs into tx's outbox through the dispatcher of
// the first one's connection, as Dispatch does, and returns their IDs. An
// *Engine writes all of them, or with an error none, but for unique jobs
// whose key another job holds: those it leaves out, returning a
// *DispatchManyError that says which (Engine.DispatchManyTx). Another
// TxDispatcher gets them one by one.
func (b *PendingMany) DispatchTx(ctx context.Context, tx Tx) ([]string, error) {
	if len(b.jobs) == 0 {
		return nil, nil
	}
	d, err := DispatcherFor(ctx, b.Pending(0).Connection())
	if err != nil {
		return nil, err
	}
	if e, ok := d.(*Engine); ok {
		return e.DispatchManyTx(ctx, tx, b)
	}
	td, ok := d.(TxDispatcher)
	if !ok {
		return nil, fmt.Errorf("%w: dispatch many in a transaction: the dispatcher %T has no outbox", ErrInvalid, d)
	}
	ids := make([]string, len(b.jobs))
	for i := range b.jobs {
		id, err := td.DispatchTx(ctx, tx, b.Pending(i))
		if err != nil {
			return nil, fmt.Errorf("dispatch many in a transaction: job %d: %w", i, err)
		}
		ids[i] = id
	}
	return ids, nil
}

// BatchTxDispatcher writes batches into an SQL transaction's outbox:
// *Engine is one.
type BatchTxDispatcher interface {
	DispatchBatchTx(ctx context.Context, tx Tx, b *PendingBatch) (id string, err error)
}

// DispatchTx writes the batch into tx's outbox, as one row holding its
// record and its jobs, through the dispatcher of its connection, which
// must be a BatchTxDispatcher, and returns the batch's ID. A relay creates the
// batch and pushes its jobs once tx commits.
func (b *PendingBatch) DispatchTx(ctx context.Context, tx Tx) (string, error) {
	d, err := DispatcherFor(ctx, b.opts.Connection)
	if err != nil {
		return "", err
	}
	bd, ok := d.(BatchTxDispatcher)
	if !ok {
		return "", fmt.Errorf("%w: dispatch batch in a transaction: the dispatcher %T has no outbox", ErrInvalid, d)
	}
	return bd.DispatchBatchTx(ctx, tx, b)
}

// DispatchTx writes p's job into tx's outbox, sealed, checked and encoded
// as Dispatch would push it, and returns its ID: *Engine is a
// TxDispatcher. A unique job whose key another job holds, in Redis or
// waiting in the outbox, is not written, and DispatchTx returns a
// *DuplicateError, as Dispatch does, leaving tx usable; its lock is
// taken when the relay pushes it, and a duplicate that only then shows
// is dropped (docs/outbox.md, "Unique jobs").
func (e *Engine) DispatchTx(ctx context.Context, tx Tx, p *PendingDispatch) (string, error) {
	if err := checkTx(tx); err != nil {
		return "", fmt.Errorf("dispatch %s in a transaction: %w", p.JobName(), err)
	}
	env, err := p.envelope(e.seal)
	if err != nil {
		return "", err
	}
	out := []Outgoing{{Envelope: env, Delay: p.DelayDuration(), At: p.at}}
	errs, err := e.insertThrough(ctx, tx, DispatchKindOne, out, p.Connection(), []time.Duration{p.JobOptions().UniqueFor})
	if err == nil && errs != nil {
		err = errs[0]
	}
	if err != nil {
		return "", fmt.Errorf("dispatch %s in a transaction: %w", env.Name, err)
	}
	return env.ID, nil
}

// DispatchManyTx writes b's jobs into tx's outbox, and returns their IDs.
// Unique jobs whose key another job holds are not written: it returns a
// *DispatchManyError holding their *DuplicateError (their IDs are ""),
// as DispatchMany does, and the others are written.
func (e *Engine) DispatchManyTx(ctx context.Context, tx Tx, b *PendingMany) ([]string, error) {
	if len(b.jobs) == 0 {
		return nil, nil
	}
	if err := checkTx(tx); err != nil {
		return nil, fmt.Errorf("dispatch many in a transaction: %w", err)
	}
	out := make([]Outgoing, len(b.jobs))
	ttl := make([]time.Duration, len(b.jobs))
	ids := make([]string, len(b.jobs))
	for i := range b.jobs {
		p := b.Pending(i)
		env, err := p.envelope(e.seal)
		if err != nil {
			return nil, fmt.Errorf("dispatch many in a transaction: job %d: %w", i, err)
		}
		out[i] = Outgoing{Envelope: env, Delay: p.DelayDuration(), At: p.at}
		ttl[i] = p.JobOptions().UniqueFor
		ids[i] = env.ID
	}
	errs, err := e.insertThrough(ctx, tx, DispatchKindMany, out, b.Pending(0).Connection(), ttl)
	if err != nil {
		return nil, fmt.Errorf("dispatch many in a transaction: %w", err)
	}
	if errs != nil {
		for i, err := range errs {
			if err != nil {
				ids[i] = ""
			}
		}
		return ids, &DispatchManyError{Errs: errs}
	}
	return ids, nil
}

// outboxBatchRecord is the payload of a batch row: what DispatchBatch
// writes to Redis, as the relay will.
type outboxBatchRecord struct {
	Fields []string          `msgpack:"f"`
	Jobs   int               `msgpack:"n"`
	Push   []outboxBatchPush `msgpack:"p"`
}

type outboxBatchPush struct {
	ID      string `msgpack:"i"`
	Queue   string `msgpack:"q"`
	Delay   int64  `msgpack:"d"`
	Payload []byte `msgpack:"b"`
}

// DispatchBatchTx writes b into tx's outbox as one row, holding the
// batch's record and its jobs, and returns the batch's ID. The relay
// creates the batch and pushes its jobs when tx has committed.
func (e *Engine) DispatchBatchTx(ctx context.Context, tx Tx, b *PendingBatch) (string, error) {
	if err := checkTx(tx); err != nil {
		return "", fmt.Errorf("dispatch batch in a transaction: %w", err)
	}
	id := NewID()
	fields, out, n, err := b.build(id, e.seal)
	if err != nil {
		return "", err
	}
	rec := outboxBatchRecord{Jobs: n, Push: make([]outboxBatchPush, len(out))}
	for _, f := range fields {
		switch v := f.(type) {
		case string:
			rec.Fields = append(rec.Fields, v)
		case []byte:
			rec.Fields = append(rec.Fields, string(v))
		default:
			return "", fmt.Errorf("dispatch batch in a transaction: field %v of type %T", f, f)
		}
	}
	err = e.dispatchThrough(ctx, DispatchKindBatch, out, func(ctx context.Context) error {
		now := time.Now().UnixMilli()
		for i, o := range out {
			row, err := e.outboxRow(o, b.opts.Connection, 0, now)
			if err != nil {
				return err
			}
			rec.Push[i] = outboxBatchPush{ID: row.ID, Queue: row.Queue, Delay: row.DelayMS, Payload: row.Payload}
		}
		payload, err := msgpack.Marshal(&rec)
		if err != nil {
			return err
		}
		_, err = outboxsql.Insert(ctx, tx, e.outboxTable(), []outboxsql.Row{{
			ID: id, Kind: outboxsql.KindBatch, Connection: b.opts.Connection, Queue: b.opts.Queue,
			Name: cmpOr(b.opts.Name, "batch"), Payload: payload,
		}})
		if err != nil {
			return err
		}
		return e.wakeRelays(ctx, tx)
	})
	if err != nil {
		return "", fmt.Errorf("dispatch batch in a transaction: %w", err)
	}
	return id, nil
}

// insertThrough writes out into tx's outbox inside the engine's dispatch
// middleware, which sees it as a push of kind; uniqueFor returns the
// unique lock's lifetime of each job of out. A unique job whose key a
// job holds, in Redis or waiting in the outbox, is not written: errs
// then holds a *DuplicateError at its index (nil for the jobs written),
// and the middleware sees, for one job, that error, for many, a
// *DispatchManyError.
func (e *Engine) insertThrough(ctx context.Context, tx Tx, kind DispatchKind, out []Outgoing, connection string, uniqueFor []time.Duration) (errs []error, err error) {
	err = e.dispatchThrough(ctx, kind, out, func(ctx context.Context) error {
		now := time.Now().UnixMilli()
		rows := make([]outboxsql.Row, len(out))
		for i, o := range out {
			row, err := e.outboxRow(o, connection, uniqueFor[i].Milliseconds(), now)
			if err != nil {
				return err
			}
			rows[i] = row
		}
		var err error
		if errs, err = e.insertUnique(ctx, tx, rows); err != nil || errs == nil {
			return err
		}
		if len(errs) == 1 {
			return errs[0]
		}
		return &DispatchManyError{Errs: errs}
	})
	if errs != nil {
		// The duplicates are in errs; other errors stand.
		var dup *DuplicateError
		var many *DispatchManyError
		if errors.As(err, &dup) || errors.As(err, &many) {
			err = nil
		}
	}
	return errs, err
}

// dispatchThrough runs write inside the engine's dispatch middleware, if
// it has any.
func (e *Engine) dispatchThrough(ctx context.Context, kind DispatchKind, out []Outgoing, write func(context.Context) error) error {
	if !e.hasDispatchMiddleware() {
		return write(ctx)
	}
	return e.pushThrough(ctx, &DispatchCall{Kind: kind, Jobs: out}, write)
}

// outboxRow checks o as a push does (stored), and returns its row. A
// partitioned queue's partition is chosen from the job's ID, so that
// every relay that pushes the row pushes it to the same one.
func (e *Engine) outboxRow(o Outgoing, connection string, uniqueFor, now int64) (outboxsql.Row, error) {
	env := o.Envelope
	if env.ID == "" {
		env.ID = newIDAt(now)
	}
	// The partition is chosen by the ID, so that every relay that pushes
	// the row pushes it to the same one.
	queue, payload, _, err := e.stored(env, o.Delay, now, env.ID)
	if err != nil {
		return outboxsql.Row{}, err
	}
	row := outboxsql.Row{
		ID: env.ID, Kind: outboxsql.KindJob, Connection: connection, Queue: queue, Name: env.Name,
		DelayMS: delayMillis(max(o.Delay, 0)), Payload: payload,
	}
	if !o.At.IsZero() {
		// Read against the database's clock as the row is claimed.
		row.DelayMS, row.RunAt = 0, o.At
	}
	if env.UniqueKey != "" {
		row.UniqueKey, row.UniqueForMS = env.UniqueKey, max(uniqueFor, 1)
	}
	return row, nil
}

func (e *Engine) outboxTable() string { return cmpOr(e.cfg.OutboxTable, DefaultOutboxTable) }
