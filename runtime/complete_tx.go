package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
)

// ErrAlreadyCompleted is wrapped by CompleteTx's error when another
// attempt of the job completed it first: PostgreSQL has aborted the
// transaction, which the handler must roll back. A handler that returns
// it (wrapped or not) has its job acked: it is done.
var ErrAlreadyCompleted = errors.New("jobgen: another attempt of the job completed it")

// CompleteTx records in tx that the running job is complete, so that
// the handler's writes in tx and the job's completion commit together,
// or not at all: exactly-once effects (docs/outbox.md, "Exactly-once
// effects"). ctx is the context the worker gave the handler; tx a
// transaction on the database of EngineConfig.Completions, whose outbox
// table is at version 2 or later.
//
// It writes a row keyed by the job's ID into the outbox table's
// completed table. Once tx commits, the handler returns nil and the
// worker acks the job in Redis as usual. If the worker dies, or the ack
// is lost, between the commit and the ack, the job is reserved again
// when its lease runs out, and the worker that reserves it finds the
// row and acks it without running the handler, whatever its tries. If
// tx rolls back, there is no row, and the job runs again as any job
// that failed does. Two attempts at once (a lease lost while the
// handler ran) both write the row: the second blocks until the first
// commits, then fails, wrapping ErrAlreadyCompleted, and its
// transaction's writes are rolled back; the handler returns that error
// and the worker acks the job. The same covers a job that Redis lost the
// reservation of (a restart without appendfsync always), which comes back
// as attempt 1 and so is not looked up before it runs.
//
// It refuses (ErrInvalid) a nil tx, typed or not, a ctx that is no
// job's, and an engine without EngineConfig.Completions, whose workers
// would not look the job up before running it again. After CompleteTx,
// commit, and return nil: the job is complete whatever the handler
// returns next.
func CompleteTx(ctx context.Context, tx Tx) error {
	if err := checkTx(tx); err != nil {
		return fmt.Errorf("complete a job in a transaction: %w", err)
	}
	jc, _ := ctx.Value(jobContextKey{}).(*jobContext)
	if jc == nil || jc.engine == nil {
		return fmt.Errorf("%w: CompleteTx: ctx is no job's: pass the context the worker gave the handler", ErrInvalid)
	}
	e, info := jc.engine, jc.info
	if e.cfg.Completions == nil {
		return fmt.Errorf("%w: CompleteTx of %s (%s): EngineConfig.Completions is not set, so no worker would look the job up before running it again", ErrInvalid, info.Name, info.ID)
	}
	jc.completing.Store(true)
	_, err := tx.ExecContext(ctx, outboxsql.Complete(e.outboxTable()), info.ID, info.Attempt, jc.ref.Token)
	switch {
	case err == nil:
		return nil
	case isUniqueViolation(err):
		return fmt.Errorf("complete %s (%s) in a transaction: %w; roll the transaction back", info.Name, info.ID, ErrAlreadyCompleted)
	default:
		return fmt.Errorf("complete %s (%s) in a transaction: %w", info.Name, info.ID, err)
	}
}

// isUniqueViolation says whether err is PostgreSQL's unique_violation
// (SQLSTATE 23505), as lib/pq and pgx report it.
func isUniqueViolation(err error) bool {
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		return coded.SQLState() == "23505"
	}
	return strings.Contains(err.Error(), "23505")
}

// completionRecheck is how long a job waits, its attempt returned, when
// the completed table could not be read before it ran again.
const completionRecheck = 5 * time.Second

// completedInTx says whether a job reserved again was completed in its
// handler's transaction by an earlier attempt. Only a job reserved
// before (attempt 2 or later) is looked up: an attempt whose handler
// called CompleteTx and that a stop cut short keeps its attempt
// (settleCutShort), so that the next one is looked up too.
func (w *Worker) completedInTx(ctx context.Context, res Reservation) (bool, error) {
	db := w.e.cfg.Completions
	if db == nil || res.Attempts < 2 {
		return false, nil
	}
	var done bool
	if err := db.QueryRowContext(ctx, outboxsql.Completed(w.e.outboxTable()), res.ID).Scan(&done); err != nil {
		return false, fmt.Errorf("look job %s up in the completed table of %s: %w", res.ID, w.e.outboxTable(), err)
	}
	return done, nil
}

// pruneCompletions deletes, at start and then once a minute, the rows
// of the completed table older than EngineConfig.CompletionRetention.
func (w *Worker) pruneCompletions(ctx context.Context) {
	db := w.e.cfg.Completions
	if db == nil {
		return
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if _, err := db.ExecContext(ctx, outboxsql.Prune(w.e.outboxTable()), w.e.cfg.CompletionRetention.Milliseconds()); err != nil && ctx.Err() == nil {
			w.log.Warn("pruning the completed table failed", "table", outboxsql.Completions(w.e.outboxTable()), "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
