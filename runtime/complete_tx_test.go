package runtime_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// ledgerJob writes one row into an effects table, in the transaction
// that completes it.
type ledgerJob struct{ Tries int }

func (ledgerJob) JobName() string { return "test.Ledger" }
func (j ledgerJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "ledger", Tries: j.Tries}
}
func (j ledgerJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// completeEnv marks the test binary run as the worker that dies between
// CompleteTx's commit and the ack (runCompleteChild).
const completeEnv = "JOBGEN_TEST_COMPLETE_CHILD"

// completeBundle is a real Redis, a database with an outbox table (and
// its completed table) and an effects table, and an engine whose
// Completions is that database.
type completeBundle struct {
	bundle
	url     string
	db      *sql.DB
	table   string
	effects string
}

func setupComplete(t *testing.T) completeBundle {
	t.Helper()
	url := pgtest.URL(t)
	db, err := sql.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db)
	require.NoError(t, runtime.MigrateOutbox(context.Background(), db, table))
	effects := table + "_effects"
	_, err = db.Exec("CREATE TABLE " + effects + " (job_id text NOT NULL, attempt int NOT NULL)")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + effects) })
	b := setup(t, redistest.Backends(t)[0], runtime.EngineConfig{OutboxTable: table, Completions: db})
	return completeBundle{bundle: b, url: url, db: db, table: table, effects: effects}
}

// effect writes the job's effect and completes it in one transaction,
// committed if commit holds.
func effect(ctx context.Context, db *sql.DB, effects string, commit bool) error {
	info, _ := runtime.JobInfoFrom(ctx)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+effects+" (job_id, attempt) VALUES ($1, $2)", info.ID, info.Attempt); err != nil {
		return err
	}
	if err := runtime.CompleteTx(ctx, tx); err != nil {
		return err
	}
	if !commit {
		return errors.New("rolled back, as the test asks")
	}
	return tx.Commit()
}

func (b completeBundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.QueryRow(query, args...).Scan(&n))
	return n
}

// runWorker runs a worker on b's engine with handle for test.Ledger
// until the ledger queue is empty, and returns the handler's runs.
func (b completeBundle) runWorker(t *testing.T, handle func(ctx context.Context) error) int {
	t.Helper()
	var runs atomic.Int32
	r := runtime.NewRouter()
	runtime.Register(r, "test.Ledger", func(ctx context.Context, _ ledgerJob) error {
		runs.Add(1)
		return handle(ctx)
	})
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"ledger"}, RetryAfter: 30 * time.Second, Timeout: 20 * time.Second,
		Sleep: 20 * time.Millisecond, Backoff: []time.Duration{time.Millisecond}, Logger: quiet})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	eventually(t, func() bool {
		s := sizes(t, b.bundle, "ledger")
		return s.Total() == 0
	}, "the ledger queue empties")
	cancel()
	require.NoError(t, <-done)
	return int(runs.Load())
}

// A worker that dies after CompleteTx's transaction committed and before
// its ack: the job is reserved again when its lease runs out, as
// attempt 2 of 1, and the next worker finds it completed and acks it
// without running it. The effect is written once, and nothing fails.
// Without the look-up the job failed unrun ("attempt 2 of 1"), or with
// tries to spare ran and wrote its effect twice.
func TestCompleteTxWorkerDiesAfterTheCommit(t *testing.T) {
	t.Parallel()
	b := setupComplete(t)
	for _, tries := range []int{1, 3} {
		t.Run(fmt.Sprintf("tries=%d", tries), func(t *testing.T) {
			ctx := runtime.WithDispatcher(b.ctx, b.engine)
			id, err := runtime.Dispatch(ctx, ledgerJob{Tries: tries})
			require.NoError(t, err)

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), completeEnv+"=1", "CHILD_URL=redis://"+redistest.Addr(t)+"/0", "CHILD_PREFIX="+b.prefix,
				"CHILD_PG="+b.url, "CHILD_TABLE="+b.table, "CHILD_EFFECTS="+b.effects)
			cmd.Stderr = os.Stderr
			err = cmd.Run()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child dies")
			require.Equal(t, 7, exit.ExitCode(), "the child died after its commit, before its ack")
			require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.effects+" WHERE job_id = $1", id))
			require.Equal(t, int64(1), sizes(t, b.bundle, "ledger").Reserved, "the job is still reserved under the dead worker's lease")

			runs := b.runWorker(t, func(ctx context.Context) error { return effect(ctx, b.db, b.effects, true) })
			require.Zero(t, runs, "the handler ran again")
			require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.effects+" WHERE job_id = $1", id), "the effect was written once")
			require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.table+"_completed WHERE id = $1 AND attempt = 1", id))
			require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "ledger"), "the job is acked, and nothing failed")
		})
	}
}

// runCompleteChild runs a worker whose handler writes its effect,
// completes the job in the same transaction, commits, and dies before
// the ack.
func runCompleteChild() int {
	ctx := context.Background()
	db, err := sql.Open("postgres", os.Getenv("CHILD_PG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	e, err := runtime.Open(ctx, os.Getenv("CHILD_URL"), runtime.EngineConfig{Prefix: os.Getenv("CHILD_PREFIX"),
		OutboxTable: os.Getenv("CHILD_TABLE"), Completions: db})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	r := runtime.NewRouter()
	runtime.Register(r, "test.Ledger", func(ctx context.Context, _ ledgerJob) error {
		if err := effect(ctx, db, os.Getenv("CHILD_EFFECTS"), true); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(4)
		}
		os.Exit(7) // committed; the ack never goes
		return nil
	})
	// The dead worker's lease runs out RetryAfter after its reserve.
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"ledger"}, RetryAfter: 3 * time.Second, Timeout: 2500 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	_ = w.Run(ctx)
	return 5 // the job never came
}

// A handler whose transaction rolls back leaves no completion: the job
// runs again, and its second attempt's commit is the one effect.
func TestCompleteTxRollbackRunsAgain(t *testing.T) {
	t.Parallel()
	b := setupComplete(t)
	id, err := runtime.Dispatch(runtime.WithDispatcher(b.ctx, b.engine), ledgerJob{Tries: 2})
	require.NoError(t, err)
	runs := b.runWorker(t, func(ctx context.Context) error {
		info, _ := runtime.JobInfoFrom(ctx)
		return effect(ctx, b.db, b.effects, info.Attempt == 2)
	})
	require.Equal(t, 2, runs)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.effects+" WHERE job_id = $1 AND attempt = 2", id))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.effects))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.table+"_completed WHERE id = $1 AND attempt = 2", id))
	require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "ledger"))
}

// CompleteTx refuses a nil or typed nil transaction, a context that is
// no job's, and an engine without Completions; a second completion of
// the job fails with ErrAlreadyCompleted, and its transaction's writes
// do not commit.
func TestCompleteTxRefuses(t *testing.T) {
	t.Parallel()
	b := setupComplete(t)
	require.ErrorIs(t, runtime.CompleteTx(b.ctx, nil), runtime.ErrInvalid)
	require.ErrorIs(t, runtime.CompleteTx(b.ctx, (*sql.Tx)(nil)), runtime.ErrInvalid)
	tx, err := b.db.Begin()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	err = runtime.CompleteTx(b.ctx, tx)
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorContains(t, err, "no job's")

	_, err = runtime.Dispatch(runtime.WithDispatcher(b.ctx, b.engine), ledgerJob{Tries: 1})
	require.NoError(t, err)
	var second error
	runs := b.runWorker(t, func(ctx context.Context) error {
		if err := effect(ctx, b.db, b.effects, true); err != nil {
			return err
		}
		second = effect(ctx, b.db, b.effects, true)
		return nil
	})
	require.Equal(t, 1, runs)
	require.ErrorIs(t, second, runtime.ErrAlreadyCompleted)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.effects), "the second transaction's effect did not commit")

	// An engine without Completions: CompleteTx refuses in the handler.
	plain := setup(t, redistest.Backends(t)[0], runtime.EngineConfig{OutboxTable: b.table})
	_, err = runtime.Dispatch(runtime.WithDispatcher(b.ctx, plain.engine), ledgerJob{Tries: 1})
	require.NoError(t, err)
	nb := b
	nb.bundle = plain
	var refused error
	nb.runWorker(t, func(ctx context.Context) error {
		refused = effect(ctx, b.db, b.effects, true)
		return nil
	})
	require.ErrorIs(t, refused, runtime.ErrInvalid)
	require.ErrorContains(t, refused, "EngineConfig.Completions")
}

// An engine with Completions checks the outbox table as it starts: a
// table at version 1 fails the start, naming outbox:migrate.
func TestCompletionsCheckTheTableAtStart(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db)
	be := redistest.Backends(t)[0]
	open := func() error {
		e, err := runtime.Open(context.Background(), be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(t), OutboxTable: table, Completions: db})
		if err == nil {
			_ = e.Close()
		}
		return err
	}
	require.ErrorIs(t, open(), runtime.ErrNoOutboxTable)
	_, err = runtime.MigrateOutboxTo(context.Background(), db, table, 1, false)
	require.NoError(t, err)
	err = open()
	require.ErrorIs(t, err, runtime.ErrOutboxVersion)
	require.ErrorContains(t, err, "outbox:migrate")
	require.NoError(t, runtime.MigrateOutbox(context.Background(), db, table))
	require.NoError(t, open())
}

// A job whose completion committed but whose reservation Redis lost (a
// restart with appendfsync everysec) comes back as attempt 1, which is
// not looked up: its handler runs, CompleteTx returns
// ErrAlreadyCompleted, the handler returns it, and the worker acks the
// job rather than failing it, with tries=1. Its effect stays once.
func TestCompleteTxAlreadyCompletedIsAcked(t *testing.T) {
	t.Parallel()
	b := setupComplete(t)
	id, err := runtime.Dispatch(runtime.WithDispatcher(b.ctx, b.engine), ledgerJob{Tries: 1})
	require.NoError(t, err)
	_, err = b.db.Exec("INSERT INTO "+b.effects+" (job_id, attempt) VALUES ($1, 1)", id)
	require.NoError(t, err)
	_, err = b.db.Exec("INSERT INTO "+b.table+"_completed (id, attempt) VALUES ($1, 1)", id)
	require.NoError(t, err)
	var got error
	runs := b.runWorker(t, func(ctx context.Context) error {
		got = effect(ctx, b.db, b.effects, true)
		return fmt.Errorf("charge: %w", got)
	})
	require.Equal(t, 1, runs)
	require.ErrorIs(t, got, runtime.ErrAlreadyCompleted)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+b.effects+" WHERE job_id = $1", id))
	require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "ledger"), "acked, not failed")
}
