package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/send"
)

var (
	scriptOutboxPush    = mustScript("outbox_push")
	scriptOutboxRelease = mustScript("outbox_release")
)

// Notifier wakes a relay when rows may have been committed to the outbox:
// the pgx module's listener waits on LISTEN. Without one a relay polls.
type Notifier interface {
	// Wait returns nil once a notification has arrived since the last
	// call returned, at once if one has; ctx's error when ctx ends first;
	// or the error that broke the listener.
	Wait(ctx context.Context) error
}

// RelayConfig configures a Relay.
type RelayConfig struct {
	// DB is the PostgreSQL database holding the outbox. Required.
	DB *sql.DB
	// Wake, if set, wakes the relay when a transaction that wrote to the
	// outbox commits (pgxoutbox.Listen). The relay still polls every Poll.
	Wake Notifier
	// Poll is how often the relay looks at the table without being woken.
	// Default 1s with Wake, 100ms without.
	Poll time.Duration
	// Batch is the most rows one claim takes. Default 500, at most 5000.
	Batch int
	// Connections are the engines of the named connections whose rows the
	// relay pushes too; the relay's own engine takes the rows of the
	// default connection (""). Rows of other connections are left for a
	// relay that serves them.
	Connections map[string]*Engine
	// Lease bounds the time from a claim to the push of its rows: a push
	// that would run later is refused by Redis, and the claim is let go.
	// The relay's transaction ends after twice that idle, so that a
	// stalled relay's rows go to another. Default 30s.
	Lease time.Duration
	// Logger receives the relay's errors, and a line for each job it
	// drops or parks. Default slog.Default().
	Logger *slog.Logger
}

func (c *RelayConfig) setDefaults() {
	if c.Poll == 0 {
		c.Poll = 100 * time.Millisecond
		if c.Wake != nil {
			c.Poll = time.Second
		}
	}
	if c.Batch == 0 {
		c.Batch = 500
	}
	if c.Lease == 0 {
		c.Lease = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c *RelayConfig) validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("%w: RelayConfig.DB is required", ErrInvalid)
	case c.Batch < 1 || c.Batch > 5000:
		return fmt.Errorf("%w: RelayConfig.Batch (%d) must be between 1 and 5000", ErrInvalid, c.Batch)
	case c.Poll < time.Millisecond:
		return fmt.Errorf("%w: RelayConfig.Poll (%v) must be at least 1ms", ErrInvalid, c.Poll)
	case c.Lease < time.Second:
		return fmt.Errorf("%w: RelayConfig.Lease (%v) must be at least 1s", ErrInvalid, c.Lease)
	}
	return nil
}

// Relay moves the jobs that committed transactions wrote to the outbox
// (DispatchTx) to Redis, each exactly once, and deletes their rows. Many
// relays may run at once, in any processes: each claims rows with FOR
// UPDATE SKIP LOCKED. docs/outbox.md gives the argument.
type Relay struct {
	e       *Engine
	cfg     RelayConfig
	table   string
	engines map[string]*Engine
	claim   string // the claim statement
	del     string // the delete statement
	clock   offsetClock
	stats   relayStats

	// Crash points, for tests: an error from one ends RelayOnce there, as
	// a relay killed at that point would stop.
	afterPush, afterCommit func() error
}

// relayStats are a relay's counts since it started.
type relayStats struct {
	relayed, skipped, dropped, parked atomic.Int64
	reconciled                        atomic.Int64
}

// NewRelay returns a relay that pushes the outbox's rows through e (and
// cfg.Connections), from the table e's config names.
func NewRelay(e *Engine, cfg RelayConfig) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Relay{e: e, cfg: cfg, table: e.outboxTable(), engines: map[string]*Engine{"": e}}
	for name, ce := range cfg.Connections {
		if ce == nil {
			return nil, fmt.Errorf("%w: RelayConfig.Connections[%q] is nil", ErrInvalid, name)
		}
		r.engines[name] = ce
	}
	names := make([]string, 0, len(r.engines))
	for name := range r.engines {
		names = append(names, quoteLiteral(name))
	}
	// The claim also ends the transaction should the relay stall with it
	// open (set_config, local to the transaction): 2 × Lease idle.
	idle := strconv.FormatInt(2*cfg.Lease.Milliseconds(), 10)
	r.claim = "SELECT seq, id, kind, connection, queue, name, " +
		"GREATEST(0, delay_ms - FLOOR(EXTRACT(EPOCH FROM (clock_timestamp() - created_at)) * 1000))::bigint, " +
		"unique_key, unique_for_ms, payload, " +
		"(SELECT set_config('idle_in_transaction_session_timeout', '" + idle + "', true)) FROM " + r.table +
		" WHERE error IS NULL AND connection IN (" + strings.Join(names, ",") + ")" +
		" ORDER BY seq LIMIT " + strconv.Itoa(cfg.Batch) + " FOR UPDATE SKIP LOCKED"
	r.del = "DELETE FROM " + r.table + " WHERE seq = ANY($1::text::bigint[])"
	return r, nil
}

// offsetClock reads the Redis clock through a local one: it reads TIME
// again every 10 s, and in between adds the time passed on the local
// monotonic clock. A claim's deadline counts from it; an error of a few
// µs over 10 s is far inside the grace a released mark keeps.
type offsetClock struct {
	mu    sync.Mutex
	base  time.Time // Redis time at read
	local time.Time // local time at read, with its monotonic reading
}

const offsetClockEvery = 10 * time.Second

func (c *offsetClock) now(ctx context.Context, rdb redis.UniversalClient) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.local.IsZero() || time.Since(c.local) > offsetClockEvery {
		sent := time.Now()
		t, err := rdb.Time(ctx).Result()
		if err != nil {
			return time.Time{}, err
		}
		// The reply was made between sent and now: take the earliest
		// reading, so that a deadline is never later than it should be.
		c.base, c.local = t, sent
	}
	return c.base.Add(time.Since(c.local)), nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// RelayCounts are what a relay did since it started.
type RelayCounts struct {
	// Relayed counts the jobs it pushed, batch jobs included.
	Relayed int64
	// Skipped counts the rows whose jobs a relay had pushed before (its
	// mark was found): a relay died between the push and the delete.
	Skipped int64
	// Dropped counts the unique jobs whose lock another job held, which
	// Dispatch would have refused with a *DuplicateError.
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

// Run relays until ctx ends, then returns nil. It relays whatever is
// there at once, then again each time cfg.Wake wakes it or cfg.Poll
// passes, and again straight away while claims come back full. Every
// minute, and first at start, it looks for marks a dead relay left
// (Reconcile); every 5s it writes the table's backlog to Redis for
// queue:monitor, the dashboard and the Prometheus module
// (Inspector.Outbox).
func (r *Relay) Run(ctx context.Context) error {
	var lastErr string
	var nextReconcile, nextPublish time.Time
	for ctx.Err() == nil {
		n, err := r.RelayOnce(ctx)
		if err != nil && ctx.Err() == nil {
			if msg := err.Error(); msg != lastErr {
				r.cfg.Logger.Error("outbox relay", "table", r.table, "err", err)
				lastErr = msg
			}
		} else if err == nil && lastErr != "" {
			r.cfg.Logger.Info("outbox relay recovered", "table", r.table)
			lastErr = ""
		}
		now := time.Now()
		if !now.Before(nextReconcile) {
			nextReconcile = now.Add(time.Minute)
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
		if n >= r.cfg.Batch {
			continue
		}
		r.wait(ctx)
	}
	return nil
}

// publishEvery is how often a running relay writes the table's backlog
// to Redis.
const publishEvery = 5 * time.Second

// wait returns when cfg.Wake wakes the relay, cfg.Poll has passed, or ctx
// ends.
func (r *Relay) wait(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Poll)
	defer cancel()
	if r.cfg.Wake == nil || r.cfg.Wake.Wait(wctx) != nil {
		<-wctx.Done()
	}
}

// relayRow is one claimed row.
type relayRow struct {
	seq                               int64
	id, kind, connection, queue, name string
	delay                             int64
	uniqueKey                         string
	uniqueFor                         int64
	payload                           []byte

	done  bool   // delete it
	err   string // park it with this error
	marks []relayMark
}

// relayMark is a mark the relay pushed or found, in its queue.
type relayMark struct{ queue, mark string }

// RelayOnce claims up to cfg.Batch committed rows, pushes their jobs,
// deletes the rows, and returns how many rows it claimed.
func (r *Relay) RelayOnce(ctx context.Context) (int, error) {
	t0, err := r.clock.now(ctx, r.e.rdb)
	if err != nil {
		return 0, fmt.Errorf("outbox relay: read the Redis clock: %w", err)
	}
	deadline := t0.UnixMilli() + r.cfg.Lease.Milliseconds()
	tx, err := r.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("outbox relay: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := r.claimRows(ctx, tx)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	byEngine := map[*Engine][]*relayRow{}
	for _, row := range rows {
		e := r.engines[row.connection]
		byEngine[e] = append(byEngine[e], row)
	}
	var pushErr error
	for e, rs := range byEngine {
		pushErr = errors.Join(pushErr, r.push(ctx, e, rs, deadline))
	}
	if r.afterPush != nil {
		if err := r.afterPush(); err != nil {
			return len(rows), err
		}
	}
	if err := r.settle(ctx, tx, rows); err != nil {
		return len(rows), errors.Join(pushErr, err)
	}
	if r.afterCommit != nil {
		if err := r.afterCommit(); err != nil {
			return len(rows), err
		}
	}
	for e, rs := range byEngine {
		r.release(ctx, e, rs)
	}
	return len(rows), pushErr
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
		var set sql.NullString
		if err := rs.Scan(&row.seq, &row.id, &row.kind, &row.connection, &row.queue, &row.name,
			&row.delay, &row.uniqueKey, &row.uniqueFor, &row.payload, &set); err != nil {
			return nil, fmt.Errorf("outbox relay: claim: %w", err)
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("outbox relay: claim: %w", err)
	}
	return rows, nil
}

// relayPush is one job to push, under its mark, for a row.
type relayPush struct {
	row             *relayRow
	mark, id, queue string
	delay           int64
	payload         []byte
}

// push pushes rows' jobs through e, and marks each row done or parked.
// A row whose push failed in a way that may be passing stays as it was.
func (r *Relay) push(ctx context.Context, e *Engine, rows []*relayRow, deadline int64) error {
	var jobs []relayPush
	var errs error
	for _, row := range rows {
		switch row.kind {
		case outboxJob:
			ok, err := r.unique(ctx, e, row)
			errs = errors.Join(errs, err)
			if ok {
				jobs = append(jobs, relayPush{row: row, mark: row.id, id: row.id, queue: row.queue, delay: row.delay, payload: row.payload})
			}
		case outboxBatch:
			js, err := r.batch(ctx, e, row)
			errs = errors.Join(errs, err)
			jobs = append(jobs, js...)
		default:
			row.err = fmt.Sprintf("unknown outbox row kind %q", row.kind)
		}
	}
	if len(jobs) == 0 {
		return errs
	}
	return errors.Join(errs, r.send(ctx, e, jobs, deadline))
}

// unique takes a unique job's lock, with its ID as owner, and reports
// whether to push it. A job whose mark is there was pushed already: its
// lock is not taken again, since the job may have run and released it.
// A job whose lock another job holds is dropped, as Dispatch refuses it.
func (r *Relay) unique(ctx context.Context, e *Engine, row *relayRow) (bool, error) {
	if row.uniqueKey == "" {
		return true, nil
	}
	_, err := e.rdb.ZScore(ctx, e.keys.Relayed(row.queue), row.id).Result()
	switch {
	case err == nil:
		return true, nil // pushed before: the push skips it
	case !errors.Is(err, redis.Nil):
		return false, fmt.Errorf("outbox relay: job %s: read its mark: %w", row.id, err)
	}
	env := &Envelope{ID: row.id, Name: row.name, UniqueKey: row.uniqueKey}
	_, err = e.lockUnique(ctx, env, time.Duration(row.uniqueFor)*time.Millisecond)
	var dup *DuplicateError
	switch {
	case errors.As(err, &dup):
		r.cfg.Logger.Warn("outbox relay: dropped a unique job whose lock another job holds",
			"job", row.name, "id", row.id, "key", row.uniqueKey, "holder", dup.HolderID)
		r.stats.dropped.Add(1)
		row.done = true
		return false, nil
	case err != nil:
		return false, fmt.Errorf("outbox relay: %w", err)
	}
	return true, nil
}

// batch creates a batch row's batch, unless it exists, and returns its
// jobs to push. The create's nonce is the batch's, so that a create made
// again by another relay finds it and changes nothing.
func (r *Relay) batch(ctx context.Context, e *Engine, row *relayRow) ([]relayPush, error) {
	var rec outboxBatchRecord
	if err := msgpack.Unmarshal(row.payload, &rec); err != nil {
		row.err = fmt.Sprintf("decode batch record: %v", err)
		return nil, nil
	}
	args := []any{"create", rec.Jobs, e.cfg.StateRetention.Milliseconds(), "outbox:" + row.id}
	for _, f := range rec.Fields {
		args = append(args, f)
	}
	bk := e.keys.Batch(row.id)
	if err := (call{Script: scriptBatchAdd, Keys: bk.All(), Args: args}).Run(ctx, e.rdb).Err(); err != nil {
		if redis.HasErrorPrefix(err, "WRONGTYPE") {
			row.err = "create batch: " + err.Error()
			return nil, nil
		}
		return nil, fmt.Errorf("outbox relay: create batch %s: %w", row.id, err)
	}
	if err := e.indexBatch(ctx, row.id); err != nil {
		return nil, fmt.Errorf("outbox relay: batch %s: %w", row.id, err)
	}
	jobs := make([]relayPush, len(rec.Push))
	for i, p := range rec.Push {
		jobs[i] = relayPush{row: row, mark: row.id + "/" + p.ID, id: p.ID, queue: p.Queue, delay: p.Delay, payload: p.Payload}
	}
	return jobs, nil
}

// relayChunk is the most jobs one outbox_push call carries.
const relayChunk = 500

// send pushes jobs through e's outbox_push script, one call per queue and
// 500 jobs, in one pipeline, and records what each row's jobs came to.
func (r *Relay) send(ctx context.Context, e *Engine, jobs []relayPush, deadline int64) error {
	type group struct {
		queue string
		jobs  []relayPush
	}
	var groups []*group
	open := map[string]*group{}
	for _, j := range jobs {
		g := open[j.queue]
		if g == nil || len(g.jobs) >= relayChunk {
			if err := validateQueueOrPartition(j.queue); err != nil {
				j.row.err = err.Error()
				continue
			}
			g = &group{queue: j.queue}
			open[j.queue] = g
			groups = append(groups, g)
		}
		g.jobs = append(g.jobs, j)
	}
	calls := make([]call, len(groups))
	for i, g := range groups {
		if err := e.remember(ctx, g.queue); err != nil {
			return fmt.Errorf("outbox relay: %w", err)
		}
		step := jobrdb.Enqueue{Queue: e.keys.Queue(g.queue), Width: jobrdb.WidthEach}
		marks := make([]any, 0, 2+len(g.jobs))
		marks = append(marks, deadline, len(g.jobs))
		for _, j := range g.jobs {
			marks = append(marks, j.mark)
			step.Add(j.id, j.payload, j.delay, storedGroup(g.queue, j.id, j.payload))
		}
		if step.Grouped() {
			e.grouped.add(g.queue)
		}
		calls[i] = call{Script: scriptOutboxPush, Keys: step.Keys(e.keys.Relayed(g.queue)), Args: step.Args(marks...)}
	}
	// With Replication, a push counts only once WAIT has the replicas
	// confirm it: a row is deleted only after its job survives a failover.
	rep := e.cfg.Replication
	cmds, waitErrs := send.PushedReplies(ctx, e.rdb, calls, send.Replicas{N: rep.Replicas, Timeout: rep.Timeout})
	var errs error
	failed := map[*relayRow]bool{}
	for i, g := range groups {
		res, err := cmds[i].Slice()
		if err == nil && waitErrs != nil && waitErrs[i] != nil {
			err = waitErrs[i]
		}
		if err == nil && len(res) != 3 {
			err = fmt.Errorf("unexpected reply %v", res)
		}
		if err != nil {
			errs = errors.Join(errs, fmt.Errorf("outbox relay: push to %s: %w", g.queue, err))
			for _, j := range g.jobs {
				failed[j.row] = true
			}
			continue
		}
		r.tally(e, g.jobs, res, failed)
	}
	for _, j := range jobs {
		if !failed[j.row] && j.row.err == "" {
			j.row.done = true
		}
	}
	return errs
}

// tally reads one push call's reply: the jobs it pushed, skipped and
// refused.
func (r *Relay) tally(e *Engine, jobs []relayPush, res []any, failed map[*relayRow]bool) {
	skipped := map[string]bool{}
	for _, m := range asStrings(res[1]) {
		skipped[m] = true
	}
	for _, m := range asStrings(res[2]) {
		for _, j := range jobs {
			if j.mark == m {
				j.row.err = "job ID " + j.id + " is taken in queue " + j.queue + " by a job with another payload"
				failed[j.row] = true
			}
		}
	}
	r.stats.relayed.Add(asInt(res[0]))
	r.stats.skipped.Add(int64(len(skipped)))
	for _, j := range jobs {
		if failed[j.row] {
			continue
		}
		j.row.marks = append(j.row.marks, relayMark{j.queue, j.mark})
		if !skipped[j.mark] && !e.events.empty() {
			e.events.emit(Event{Kind: JobQueued, Queue: e.logicalQueue(j.queue), Name: j.row.name, ID: j.id, Delay: time.Duration(j.delay) * time.Millisecond})
		}
	}
}

func asStrings(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// settle deletes the rows that are done and parks those that failed for
// good, and commits.
func (r *Relay) settle(ctx context.Context, tx *sql.Tx, rows []*relayRow) error {
	var done []string
	for _, row := range rows {
		switch {
		case row.err != "":
			r.cfg.Logger.Error("outbox relay: parked a row it cannot push", "id", row.id, "job", row.name, "err", row.err)
			if _, err := tx.ExecContext(ctx, "UPDATE "+r.table+" SET error = $1 WHERE seq = $2", row.err, row.seq); err != nil {
				return fmt.Errorf("outbox relay: park row %d: %w", row.seq, err)
			}
			r.stats.parked.Add(1)
		case row.done:
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

// release starts the countdown of the marks of deleted rows. A failure
// leaves them for Reconcile.
func (r *Relay) release(ctx context.Context, e *Engine, rows []*relayRow) {
	byQueue := map[string][]any{}
	for _, row := range rows {
		if !row.done {
			continue
		}
		for _, m := range row.marks {
			byQueue[m.queue] = append(byQueue[m.queue], m.mark)
		}
	}
	r.releaseMarks(ctx, e, byQueue)
}

// releaseMarks runs outbox_release for each queue's marks.
func (r *Relay) releaseMarks(ctx context.Context, e *Engine, byQueue map[string][]any) int64 {
	grace := r.grace()
	var calls []call
	for q, marks := range byQueue {
		for s := 0; s < len(marks); s += relayChunk {
			args := append([]any{grace}, marks[s:min(s+relayChunk, len(marks))]...)
			calls = append(calls, call{Script: scriptOutboxRelease, Keys: []string{e.keys.Relayed(q)}, Args: args})
		}
	}
	if len(calls) == 0 {
		return 0
	}
	cmds, err := send.All(context.WithoutCancel(ctx), e.rdb, calls)
	if err != nil {
		r.cfg.Logger.Warn("outbox relay: release marks", "err", err)
	}
	var n int64
	for _, c := range cmds {
		v, _ := c.Int64()
		n += v
	}
	return n
}

// grace is how long a released mark stays: past the deadline of any
// relay that claimed its row before, with room for the Redis clocks of a
// cluster's masters to differ.
func (r *Relay) grace() int64 { return 2*r.cfg.Lease.Milliseconds() + time.Minute.Milliseconds() }

// Reconcile lets the marks of deleted rows expire where the relay that
// pushed them died before it could: marks pending for more than a minute
// whose rows are gone. It returns how many it let go.
func (r *Relay) Reconcile(ctx context.Context) (int, error) {
	total := 0
	for _, e := range r.engines {
		n, err := r.reconcile(ctx, e)
		total += n
		if err != nil {
			return total, err
		}
	}
	r.stats.reconciled.Add(int64(total))
	return total, nil
}

func (r *Relay) reconcile(ctx context.Context, e *Engine) (int, error) {
	now, err := e.rdb.Time(ctx).Result()
	if err != nil {
		return 0, err
	}
	queues, err := e.rdb.SMembers(ctx, e.keys.Queues()).Result()
	if err != nil {
		return 0, err
	}
	upTo := strconv.FormatInt(1e15+now.UnixMilli()-time.Minute.Milliseconds(), 10)
	total := 0
	for _, lq := range queues {
		for _, q := range e.queueNames(lq) {
			marks, err := e.rdb.ZRangeByScore(ctx, e.keys.Relayed(q), &redis.ZRangeBy{Min: "1e15", Max: upTo, Count: 1000}).Result()
			if err != nil || len(marks) == 0 {
				continue
			}
			gone, err := r.gone(ctx, marks)
			if err != nil {
				return total, err
			}
			if len(gone) > 0 {
				total += int(r.releaseMarks(ctx, e, map[string][]any{q: gone}))
			}
		}
	}
	return total, nil
}

// gone returns the marks whose rows are not in the table.
func (r *Relay) gone(ctx context.Context, marks []string) ([]any, error) {
	ids := make([]string, len(marks))
	for i, m := range marks {
		id, _, _ := strings.Cut(m, "/")
		ids[i] = quoteLiteral(id)
	}
	rs, err := r.cfg.DB.QueryContext(ctx, "SELECT id FROM "+r.table+" WHERE id IN ("+strings.Join(ids, ",")+")")
	if err != nil {
		return nil, fmt.Errorf("outbox relay: reconcile: %w", err)
	}
	defer rs.Close()
	present := map[string]bool{}
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		present[id] = true
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	var gone []any
	for _, m := range marks {
		id, _, _ := strings.Cut(m, "/")
		if !present[id] {
			gone = append(gone, m)
		}
	}
	return gone, nil
}

// publish writes the table's backlog to Redis (Inspector.Outbox).
func (r *Relay) publish(ctx context.Context) error {
	var backlog, parked int64
	var oldest sql.NullInt64
	err := r.cfg.DB.QueryRowContext(ctx, "SELECT count(*), count(*) FILTER (WHERE error IS NOT NULL), "+
		"(EXTRACT(EPOCH FROM min(created_at)) * 1000)::bigint FROM "+r.table).Scan(&backlog, &parked, &oldest)
	if err != nil {
		return err
	}
	now, err := r.e.rdb.Time(ctx).Result()
	if err != nil {
		return err
	}
	return r.e.rdb.HSet(ctx, r.e.keys.Outbox(), "table", r.table, "backlog", backlog, "parked", parked,
		"oldest", oldest.Int64, "at", now.UnixMilli()).Err()
}
