package pgxoutbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/jobgen/jobgen/runtime"
)

// Tx returns tx as the transaction DispatchTx writes into. DispatchManyTx
// writes its jobs of no unique key through it with COPY. A nil tx,
// typed or not, gives a Tx that DispatchTx refuses with an error naming
// it, rather than one that panics.
func Tx(tx pgx.Tx) runtime.Tx { return pgxTx{tx} }

type pgxTx struct{ tx pgx.Tx }

// NilTx reports a nil pgx.Tx, which runtime's DispatchTx checks before
// it writes.
func (t pgxTx) NilTx() error {
	if t.tx == nil {
		return errors.New("pgxoutbox.Tx(nil): the pgx.Tx is nil: pass the one pool.Begin returns")
	}
	if v := reflect.ValueOf(t.tx); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("pgxoutbox.Tx(nil): the pgx.Tx is a nil %T: pass the one pool.Begin returns", t.tx)
	}
	return nil
}

func (t pgxTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := t.NilTx(); err != nil {
		return nil, err
	}
	tag, err := t.tx.Exec(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return result(tag), nil
}

// CopyRows copies rows into table with COPY FROM STDIN (pgx's CopyFrom):
// DispatchManyTx writes its jobs of no unique key so, in one round trip
// of rows rather than an INSERT of 9 parameters a row.
func (t pgxTx) CopyRows(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	if err := t.NilTx(); err != nil {
		return 0, err
	}
	return t.tx.CopyFrom(ctx, pgx.Identifier(strings.Split(table, ".")), columns, pgx.CopyFromRows(rows))
}

// result is a pgx command tag as an sql.Result.
type result pgconn.CommandTag

func (r result) LastInsertId() (int64, error) {
	return 0, errors.New("pgxoutbox: LastInsertId is not supported by PostgreSQL")
}

func (r result) RowsAffected() (int64, error) { return pgconn.CommandTag(r).RowsAffected(), nil }

// DB returns a *sql.DB over pool, for the relay (outbox.RelayConfig.DB) and
// runtime.MigrateOutbox. Closing it does not close pool.
func DB(pool *pgxpool.Pool) *sql.DB { return stdlib.OpenDBFromPool(pool) }

// Listener wakes a relay when a transaction that wrote to the outbox
// commits: it holds one connection of its own, LISTENing on the channel
// the outbox table's trigger notifies. It is an outbox.Notifier.
type Listener struct {
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error // why the connection is down, while it is
}

// Listen starts listening, on a connection from pool that it keeps until
// Close, for the outbox table named table (runtime.DefaultOutboxTable if
// empty). It returns once LISTEN has run, so that no commit after it
// goes unseen. If the connection breaks it connects again, and wakes the
// relay once it has, for what it may have missed.
func Listen(ctx context.Context, pool *pgxpool.Pool, table string) (*Listener, error) {
	if table == "" {
		table = runtime.DefaultOutboxTable
	}
	if _, err := runtime.OutboxDDL(table); err != nil {
		return nil, err
	}
	channel := pgx.Identifier{runtime.OutboxChannel(table)}.Sanitize()
	conn, err := listen(ctx, pool, channel)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &Listener{wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go l.run(lctx, pool, channel, conn)
	return l, nil
}

func listen(ctx context.Context, pool *pgxpool.Pool, channel string) (*pgxpool.Conn, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgxoutbox: listen: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		conn.Release()
		return nil, fmt.Errorf("pgxoutbox: listen: %w", err)
	}
	return conn, nil
}

func (l *Listener) run(ctx context.Context, pool *pgxpool.Pool, channel string, conn *pgxpool.Conn) {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for {
		_, err := conn.Conn().WaitForNotification(ctx)
		if err == nil {
			l.signal()
			continue
		}
		// The connection is broken or ctx ended: drop it from the pool.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
		if ctx.Err() != nil {
			return
		}
		l.setErr(err)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			if conn, err = listen(ctx, pool, channel); err == nil {
				break
			}
			l.setErr(err)
			backoff = min(2*backoff, 5*time.Second)
		}
		backoff = 100 * time.Millisecond
		l.setErr(nil)
		l.signal()
	}
}

func (l *Listener) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *Listener) setErr(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
}

// Wait returns nil once a notification has arrived since the last call
// returned, ctx's error if ctx ends first, and at once the error that
// broke the connection while it is down, so that the relay polls.
func (l *Listener) Wait(ctx context.Context) error {
	select {
	case <-l.wake:
		return nil
	default:
	}
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("pgxoutbox: listener down: %w", err)
	}
	select {
	case <-l.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops listening and gives the connection back.
func (l *Listener) Close() {
	l.cancel()
	<-l.done
}
