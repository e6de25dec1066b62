package pgxoutbox_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"
)

// silentTx is a transaction whose notify is dropped: it stands for a
// transaction that did not notify because another of its process had
// just done so (runtime.OutboxNotifyEvery), whatever the timing.
type silentTx struct {
	runtime.Tx
	dropped *atomic.Int64
}

func (t silentTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if strings.Contains(q, "pg_notify") {
		t.dropped.Add(1)
		return nil, nil
	}
	return t.Tx.ExecContext(ctx, q, args...)
}

// runRelay runs a relay woken by a listener, with a poll so long that a
// row found must have been found through a wake.
func runRelay(t *testing.T, b bundle, hold time.Duration) {
	t.Helper()
	wake, err := pgxoutbox.Listen(b.ctx, b.pool, b.table)
	require.NoError(t, err)
	relay, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db, Wake: wake, Poll: time.Hour, Hold: hold})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error)
	go func() { done <- relay.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		wake.Close()
	})
}

// Rows written by many concurrent one-job transactions are all relayed,
// with the relay's poll an hour away. The first half of each producer's
// transactions notify as runtime.OutboxNotifyEvery lets them; the last
// half send no notify at all, so the relay finds their rows only because,
// woken, it keeps claiming while rows come (RelayConfig.Hold). Hold is
// long here, so that a machine however loaded commits the silent
// transactions within it.
func TestWakeRelaysEveryConcurrentSingleInsert(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runRelay(t, b, 30*time.Second)

	const producers, each = 16, 40
	var dropped atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := pgx.BeginFunc(b.ctx, b.pool, func(ptx pgx.Tx) error {
					var tx runtime.Tx = pgxoutbox.Tx(ptx)
					if i >= each/2 {
						tx = silentTx{tx, &dropped}
					}
					_, err := runtime.DispatchTx(b.ctx, tx, receipt{Order: p*each + i})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, dropped.Load(), "no transaction went without its notify")
	require.Eventually(t, func() bool { return b.ready(t) == producers*each }, time.Minute, 10*time.Millisecond,
		"rows were left in the outbox with the relay's poll an hour away")
}

// A lone job after a quiet spell, when the relay has stopped claiming at
// its cooldown, wakes the relay by its own notify: the relay's poll is an
// hour away.
func TestWakeRelaysALoneInsertAfterQuiet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runRelay(t, b, 20*time.Millisecond)
	for i := range 3 {
		// Longer than Hold and runtime.OutboxNotifyEvery: the relay waits
		// on its listener alone.
		time.Sleep(200 * time.Millisecond)
		tx, err := b.pool.Begin(b.ctx)
		require.NoError(t, err)
		_, err = runtime.DispatchTx(b.ctx, pgxoutbox.Tx(tx), receipt{Order: i})
		require.NoError(t, err)
		require.NoError(t, tx.Commit(b.ctx))
		require.Eventually(t, func() bool { return b.ready(t) == int64(i+1) }, 30*time.Second, 5*time.Millisecond,
			"job %d was not relayed with the relay's poll an hour away", i)
	}
}

// Version 3 of the schema drops the notify trigger of a table made
// before it, and its down puts the trigger back.
func TestMigrateDropsTheNotifyTrigger(t *testing.T) {
	t.Parallel()
	b := setup(t)
	triggers := func() int {
		var n int
		require.NoError(t, b.db.QueryRowContext(b.ctx,
			"SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal", b.table).Scan(&n))
		return n
	}
	require.Zero(t, triggers())
	from, err := runtime.MigrateOutboxTo(b.ctx, b.db, b.table, 2, false)
	require.NoError(t, err)
	require.Equal(t, 3, from)
	require.Equal(t, 1, triggers())
	require.NoError(t, runtime.MigrateOutbox(b.ctx, b.db, b.table))
	require.Zero(t, triggers())
	require.NoError(t, runtime.MigrateOutbox(b.ctx, b.db, b.table))
	require.Zero(t, triggers())
}
