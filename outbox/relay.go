package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/outboxsql"
	"github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/runtime"
)

// Relay moves the jobs that committed transactions wrote to the outbox
// (runtime.DispatchTx) to Redis, each exactly once, and deletes their
// rows. Many relays may run at once, in any processes: each claims rows
// with FOR UPDATE SKIP LOCKED. docs/outbox.md gives the argument.
type Relay struct {
	cfg   RelayConfig
	table string
	main  *conn            // the relay's own engine, of connection ""
	conns map[string]*conn // by connection name, "" included
	claim string           // the claim statement
	probe string           // the statement that reads whether rows wait
	del   string           // the delete statement
	clock offsetClock
	stats relayStats
	live  liveness // the record of its passes (liveness.go)

	// Crash points, for tests: an error from one ends RelayOnce there, as
	// a relay killed at that point would stop.
	afterPush, afterCommit func() error
}

// conn is an engine whose rows the relay pushes, and its store, through
// which the relay reads the Redis clock and releases marks.
type conn struct {
	e     *runtime.Engine
	store *rdb.Store
}

func newConn(e *runtime.Engine) *conn {
	return &conn{e: e, store: rdb.New(e.Client(), keyspace.New(e.Config().Prefix))}
}

// relayStats are a relay's counts since it started.
type relayStats struct {
	relayed, skipped, dropped, parked atomic.Int64
	reconciled                        atomic.Int64
}

// NewRelay returns a relay that pushes the outbox's rows through e (and
// cfg.Connections), from the table e's config names
// (EngineConfig.OutboxTable).
func NewRelay(e *runtime.Engine, cfg RelayConfig) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Relay{cfg: cfg, table: tableOf(e), main: newConn(e), live: newLiveness()}
	r.conns = map[string]*conn{"": r.main}
	for name, ce := range cfg.Connections {
		if ce == nil {
			return nil, fmt.Errorf("%w: RelayConfig.Connections[%q] is nil", runtime.ErrInvalid, name)
		}
		r.conns[name] = newConn(ce)
	}
	names := make([]string, 0, len(r.conns))
	for name := range r.conns {
		names = append(names, name)
	}
	// The claim also ends the transaction should the relay stall with it
	// open: 2 × Lease idle.
	r.claim = outboxsql.Claim(r.table, names, cfg.Batch, 2*cfg.Lease)
	r.del = outboxsql.Delete(r.table)
	r.probe = outboxsql.Waiting(r.table, names)
	return r, nil
}

// tableOf is the outbox table of e.
func tableOf(e *runtime.Engine) string {
	if t := e.Config().OutboxTable; t != "" {
		return t
	}
	return runtime.DefaultOutboxTable
}

// RelayCounts are what a relay did since it started.
type RelayCounts struct {
	// Relayed counts the jobs it pushed, batch jobs included.
	Relayed int64
	// Skipped counts the jobs that a relay had pushed before (their mark
	// was found): a relay died between the push and the delete.
	Skipped int64
	// Dropped counts the unique jobs whose lock another job held, which
	// Dispatch would have refused with a *runtime.DuplicateError.
	Dropped int64
	// Parked counts the rows it could not push, left in the table with
	// their error column set.
	Parked int64
	// Reconciled counts the marks of deleted rows it let expire for a
	// relay that died before it could.
	Reconciled int64
}

// Counts returns what the relay did since it started.
func (r *Relay) Counts() RelayCounts {
	return RelayCounts{
		Relayed: r.stats.relayed.Load(), Skipped: r.stats.skipped.Load(), Dropped: r.stats.dropped.Load(),
		Parked: r.stats.parked.Load(), Reconciled: r.stats.reconciled.Load(),
	}
}

// Run relays until ctx ends, then returns nil. It returns at once an
// error wrapping runtime.ErrNoOutboxTable, naming the table and
// outbox:migrate, when the outbox table does not exist as it starts
// (runtime.ErrOutboxVersion when its schema is older than the code's); a
// table dropped later shows as the claim's error, logged once. It relays whatever is
// there at once, then again each time cfg.Wake wakes it or cfg.Poll
// passes, and again straight away while claims come back full. For
// cfg.Hold after a wake or a claim that found rows it is hot: it looks
// again every cfg.Cooldown, so that it finds the rows of transactions
// that did not notify (runtime.OutboxNotifyEvery). Every
// minute, and first at start, it looks for marks a dead relay left
// (Reconcile); every 5s it writes the table's backlog to Redis for
// queue:monitor, the dashboard and the Prometheus module
// (runtime.Inspector.Outbox); and at most once a second it records a
// completed pass in the relays table in PostgreSQL (ReadHealth).
func (r *Relay) Run(ctx context.Context) error {
	// A missing table fails the start, naming it: every DispatchTx would
	// fail, aborting its caller's transaction. An error that may pass (the
	// database down) does not: the loop logs it and tries again.
	if err := runtime.CheckOutbox(ctx, r.cfg.DB, r.table); errors.Is(err, runtime.ErrNoOutboxTable) || errors.Is(err, runtime.ErrOutboxVersion) {
		return fmt.Errorf("outbox relay: %w", err)
	}
	var lastErr string
	var nextReconcile, nextPublish, hotUntil time.Time
	look := false       // whether to read that rows wait before the claim
	var settle settling // a full pass's settle, still running
	defer func() {
		if err := settle.wait(); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Error("outbox relay", "table", r.table, "err", err)
		}
	}()
	for ctx.Err() == nil {
		n, err := r.pass(ctx, look, &settle)
		if err != nil && ctx.Err() == nil {
			if msg := err.Error(); msg != lastErr {
				r.cfg.Logger.Error("outbox relay", "table", r.table, "err", err)
				lastErr = msg
			}
		} else if err == nil && lastErr != "" {
			r.cfg.Logger.Info("outbox relay recovered", "table", r.table)
			lastErr = ""
		}
		if err == nil {
			r.passed(ctx)
		}
		now := time.Now()
		if !now.Before(nextReconcile) {
			nextReconcile = now.Add(time.Minute)
			if err := settle.wait(); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Error("outbox relay", "table", r.table, "err", err)
			}
			if _, err := r.Reconcile(ctx); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Warn("outbox relay: reconcile", "table", r.table, "err", err)
			}
		}
		if !now.Before(nextPublish) {
			nextPublish = now.Add(publishEvery)
			if err := r.publish(ctx); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Warn("outbox relay: backlog", "table", r.table, "err", err)
			}
		}
		if n > 0 {
			hotUntil = now.Add(r.cfg.Hold)
		}
		if n >= r.cfg.Batch {
			look = false
			continue
		}
		hot := now.Before(hotUntil)
		d := r.cfg.Poll
		if hot {
			d = r.cfg.Cooldown
		}
		woke := r.wait(ctx, d)
		if woke {
			hotUntil = time.Now().Add(r.cfg.Hold)
		}
		// Woken, the relay claims at once; looking at its cooldown, it
		// first reads whether a row waits, which costs one round trip
		// where a claim costs a transaction and a read of the Redis clock.
		look = hot && !woke
	}
	return nil
}

// publishEvery is how often a running relay writes the table's backlog
// to Redis.
const publishEvery = 5 * time.Second

// pass claims and relays rows (RelayOnce), and returns how many it
// claimed; with look, only if a read shows a row waiting.
//
// A pass that claims a full batch, so that more rows likely wait, leaves
// its settle (delete, commit, release of the marks) running in s, and
// the next pass claims and pushes meanwhile: the commit's WAL flush and
// the release's round trip overlap the next claim and push. The next
// pass waits for that settle before it settles, and before it returns,
// so at most one settle is out, settles come in the order of the pushes,
// and the pushes stay in the order of the claims. The rows of a pass
// still settling are locked by its transaction, which the next claim
// skips (FOR UPDATE SKIP LOCKED). A pass that claims fewer settles at
// once, as RelayOnce does. The error of a settle left running is
// returned by the pass that waited for it.
func (r *Relay) pass(ctx context.Context, look bool, s *settling) (int, error) {
	if look {
		var waiting bool
		if err := r.cfg.DB.QueryRowContext(ctx, r.probe).Scan(&waiting); err != nil {
			return 0, errors.Join(s.wait(), fmt.Errorf("outbox relay: look for rows: %w", err))
		}
		if !waiting {
			return 0, s.wait()
		}
	}
	p, err := r.claimAndPush(ctx)
	prevErr := s.wait()
	if p == nil {
		return 0, errors.Join(prevErr, err)
	}
	if len(p.rows) >= r.cfg.Batch && ctx.Err() == nil {
		s.start(func() error { return r.settleAndRelease(ctx, p) })
		return len(p.rows), prevErr
	}
	return len(p.rows), errors.Join(prevErr, r.settleAndRelease(ctx, p))
}

// wait returns when cfg.Wake wakes the relay, reporting true, or when d
// has passed or ctx ended, reporting false. While the waker is down (its
// Wait fails at once: a listener whose connection broke), notifies are
// lost, so the relay looks every listenerDownPoll at most, rather than
// sleeping out a poll meant for a relay that is woken.
func (r *Relay) wait(ctx context.Context, d time.Duration) bool {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if r.cfg.Wake == nil {
		<-wctx.Done()
		return false
	}
	err := r.cfg.Wake.Wait(wctx)
	if err == nil {
		return true
	}
	if wctx.Err() == nil {
		t := time.NewTimer(listenerDownPoll)
		defer t.Stop()
		select {
		case <-wctx.Done():
		case <-t.C:
		}
	}
	return false
}

// listenerDownPoll is how often, at most, a relay whose waker is down
// looks for rows.
const listenerDownPoll = 100 * time.Millisecond

// relayRow is one claimed row, and what its push came to.
type relayRow struct {
	seq        int64
	connection string
	runtime.RelayRow
	runtime.RelayOutcome
}

// RelayOnce claims up to cfg.Batch committed rows, pushes their jobs,
// deletes the rows, and returns how many rows it claimed.
func (r *Relay) RelayOnce(ctx context.Context) (int, error) {
	p, err := r.claimAndPush(ctx)
	if p == nil {
		return 0, err
	}
	return len(p.rows), r.settleAndRelease(ctx, p)
}

// pushed is a pass between its push and its settle: its transaction
// still holds the claimed rows' locks.
type pushed struct {
	tx      *sql.Tx
	rows    []*relayRow
	byConn  map[*conn][]*relayRow
	pushErr error // those of the push that may pass
}

// claimAndPush reads the Redis clock, claims up to cfg.Batch rows in a
// transaction and pushes their jobs. It returns nil, and no open
// transaction, when it claimed none or failed before the push.
func (r *Relay) claimAndPush(ctx context.Context) (*pushed, error) {
	t0, err := r.clock.now(ctx, r.main.store)
	if err != nil {
		return nil, fmt.Errorf("outbox relay: read the Redis clock: %w", err)
	}
	deadline := t0.Add(r.cfg.Lease)
	tx, err := r.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("outbox relay: begin: %w", err)
	}
	rows, err := r.claimRows(ctx, tx)
	if err != nil || len(rows) == 0 {
		_ = tx.Rollback()
		return nil, err
	}
	p := &pushed{tx: tx, rows: rows, byConn: map[*conn][]*relayRow{}}
	for _, row := range rows {
		c := r.conns[row.connection]
		p.byConn[c] = append(p.byConn[c], row)
	}
	for c, rs := range p.byConn {
		p.pushErr = errors.Join(p.pushErr, r.push(ctx, c, rs, deadline))
	}
	return p, nil
}

// settleAndRelease deletes p's rows that are done, parks those that
// failed for good, commits, and then releases the marks of the rows
// deleted. It rolls p's transaction back on any error.
func (r *Relay) settleAndRelease(ctx context.Context, p *pushed) error {
	defer func() { _ = p.tx.Rollback() }()
	if r.afterPush != nil {
		if err := r.afterPush(); err != nil {
			return err
		}
	}
	if err := r.settle(ctx, p.tx, p.rows); err != nil {
		return errors.Join(p.pushErr, err)
	}
	if r.afterCommit != nil {
		if err := r.afterCommit(); err != nil {
			return err
		}
	}
	for c, rs := range p.byConn {
		r.release(ctx, c, rs)
	}
	return p.pushErr
}

// settling is the settle of a full pass, run while the next pass claims
// and pushes (Run): at most one at a time.
type settling struct{ done chan error }

// start runs fn, the settle, in the background.
func (s *settling) start(fn func() error) {
	s.done = make(chan error, 1)
	go func() { s.done <- fn() }()
}

// wait waits for the settle started, if any, and returns its error.
func (s *settling) wait() error {
	if s.done == nil {
		return nil
	}
	err := <-s.done
	s.done = nil
	return err
}

// claimRows locks and reads the next rows.
func (r *Relay) claimRows(ctx context.Context, tx *sql.Tx) ([]*relayRow, error) {
	rs, err := tx.QueryContext(ctx, r.claim)
	if err != nil {
		return nil, fmt.Errorf("outbox relay: claim: %w", err)
	}
	defer rs.Close()
	var rows []*relayRow
	for rs.Next() {
		row := &relayRow{}
		var delay, uniqueFor int64
		var set sql.NullString
		if err := rs.Scan(&row.seq, &row.ID, &row.Kind, &row.connection, &row.Queue, &row.Name,
			&delay, &row.UniqueKey, &uniqueFor, &row.Payload, &set); err != nil {
			return nil, fmt.Errorf("outbox relay: claim: %w", err)
		}
		row.Delay = time.Duration(delay) * time.Millisecond
		row.UniqueFor = time.Duration(uniqueFor) * time.Millisecond
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("outbox relay: claim: %w", err)
	}
	return rows, nil
}

// push pushes rows' jobs through c's engine, and records what each row
// came to: done, parked, or, after an error that may pass, neither.
func (r *Relay) push(ctx context.Context, c *conn, rows []*relayRow, deadline time.Time) error {
	in := make([]runtime.RelayRow, len(rows))
	for i, row := range rows {
		in[i] = row.RelayRow
	}
	res, err := c.e.PushRelayed(ctx, deadline, in)
	for i, row := range rows {
		row.RelayOutcome = res.Rows[i]
		if row.DroppedBy != "" {
			r.cfg.Logger.Warn("outbox relay: dropped a unique job whose lock another job holds",
				"job", row.Name, "id", row.ID, "key", row.UniqueKey, "holder", row.DroppedBy)
			r.stats.dropped.Add(1)
		}
	}
	r.stats.relayed.Add(res.Pushed)
	r.stats.skipped.Add(res.Skipped)
	return err
}

// settle deletes the rows that are done and parks those that failed for
// good, and commits.
func (r *Relay) settle(ctx context.Context, tx *sql.Tx, rows []*relayRow) error {
	var done []string
	for _, row := range rows {
		switch {
		case row.Parked != "":
			r.cfg.Logger.Error("outbox relay: parked a row it cannot push", "id", row.ID, "job", row.Name, "err", row.Parked)
			if _, err := tx.ExecContext(ctx, outboxsql.Park(r.table), row.Parked, row.seq); err != nil {
				return fmt.Errorf("outbox relay: park row %d: %w", row.seq, err)
			}
			r.stats.parked.Add(1)
		case row.Done:
			done = append(done, strconv.FormatInt(row.seq, 10))
		}
	}
	if len(done) > 0 {
		// One statement text whatever the rows, so that drivers that
		// prepare statements prepare it once.
		if _, err := tx.ExecContext(ctx, r.del, "{"+strings.Join(done, ",")+"}"); err != nil {
			return fmt.Errorf("outbox relay: delete: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("outbox relay: commit: %w", err)
	}
	return nil
}

// publish writes the table's backlog to Redis (runtime.Inspector.Outbox).
func (r *Relay) publish(ctx context.Context) error {
	b := rdb.OutboxBacklog{Table: r.table}
	var oldest sql.NullInt64
	err := r.cfg.DB.QueryRowContext(ctx, outboxsql.Backlog(r.table)).Scan(&b.Rows, &b.Parked, &oldest)
	if err != nil {
		return err
	}
	b.Oldest = oldest.Int64
	return r.main.store.WriteOutboxBacklog(ctx, b)
}
