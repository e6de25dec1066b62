package console_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver, for the outbox
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// withOutbox gives b's commands an outbox table of the test's own.
func withOutbox(t *testing.T, b *testBundle) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	b.outbox = &console.Outbox{DB: db}
	b.outboxTable = pgtest.Table(t, db)
	return db
}

// dispatchTx commits jobs to b's outbox, as the application does.
func dispatchTx(t *testing.T, b *testBundle, db *sql.DB, jobs ...runtime.Job) {
	t.Helper()
	cfg := b.engine.Config()
	cfg.OutboxTable = b.outboxTable
	e, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
	require.NoError(t, err)
	tx, err := db.BeginTx(b.ctx, nil)
	require.NoError(t, err)
	for _, j := range jobs {
		_, err := runtime.DispatchTx(runtime.WithDispatcher(b.ctx, e), tx, j)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

func TestOutboxMigrate(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	// --print needs neither the database nor Redis.
	code, stdout, stderr := b.runRaw(t, "outbox:migrate", "--print")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "CREATE TABLE IF NOT EXISTS jobgen_outbox")

	code, _, stderr = b.runRaw(t, "outbox:migrate")
	require.Equal(t, 1, code)
	require.Equal(t, "app outbox:migrate: needs the application's outbox database: pass it with console.WithOutbox(console.Outbox{DB: db}) (see docs/outbox.md)", strings.TrimSpace(stderr))

	db := withOutbox(t, b)
	tbl := b.outboxTable
	latest := runtime.OutboxSchemaVersion
	status := b.ok(t, "outbox:migrate", "--status")
	require.True(t, strings.HasPrefix(status, fmt.Sprintf("Outbox table %s is at version 0 of %d.\n  1  outbox table, its trigger, relays table       pending\n  2  run_at (At), completed table (CompleteTx)     pending\n", tbl, latest)), status)
	require.Equal(t, latest+1, strings.Count(status, "\n"))
	require.Equal(t, fmt.Sprintf("Outbox table %s migrated from version 0 to %d.\n", tbl, latest), b.ok(t, "outbox:migrate"))
	require.Equal(t, fmt.Sprintf("Outbox table %s is at version %d; nothing to do.\n", tbl, latest), b.ok(t, "outbox:migrate"))
	status = b.ok(t, "outbox:migrate", "--status")
	require.Contains(t, status, fmt.Sprintf("at version %d of %d.\n", latest, latest))
	require.Equal(t, latest, strings.Count(status, " applied 20"), status)
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+tbl).Scan(&n))
	require.Zero(t, n)

	require.Equal(t, fmt.Sprintf("Outbox table %s migrated from version %d to 1.\n", tbl, latest), b.ok(t, "outbox:migrate", "--to", "1"))
	// A row waiting: the down to 0 is refused, naming --force.
	dispatchTxRaw(t, db, tbl)
	code, _, stderr = b.runRaw(t, "outbox:migrate", "--to", "0")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "would lose 1 rows")
	require.Contains(t, stderr, "--force")
	require.Equal(t, "Outbox table "+tbl+" migrated from version 1 to 0.\n", b.ok(t, "outbox:migrate", "--to", "0", "--force"))
	require.Equal(t, "Outbox table "+tbl+" migrated from version 0 to 2.\n", b.ok(t, "outbox:migrate", "--to", "2"))
}

// dispatchTxRaw writes a row into the outbox table as DispatchTx would.
func dispatchTxRaw(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	_, err := db.Exec("INSERT INTO " + table + " (id, queue, name, payload) VALUES ('j1', 'q', 'n', 'p')")
	require.NoError(t, err)
}

func TestRelayCommandAndWorkRelay(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		db := withOutbox(t, b)
		b.ok(t, "outbox:migrate")

		// queue:relay moves committed jobs to Redis until stopped.
		dispatchTx(t, b, db, greet{"ada"}, greet{"grace"})
		ctx, cancel := context.WithCancel(b.ctx)
		done := make(chan int)
		go func() {
			c := &console.Command{Name: "app", Stdout: &strings.Builder{}, Stderr: &strings.Builder{}}
			console.WithOutbox(*b.outbox)(c)
			c.Engine.OutboxTable = b.outboxTable
			done <- c.Run(ctx, []string{"queue:relay", "--redis", b.url, "--prefix", b.prefix, "--poll", "20ms"})
		}()
		require.Eventually(t, func() bool { return b.sizes(t, "default").Ready == 2 }, 10*time.Second, 10*time.Millisecond)
		cancel()
		require.Equal(t, 0, <-done)

		// queue:work --relay relays and works.
		dispatchTx(t, b, db, greet{"alan"})
		code, stdout, stderr := b.run(t, "queue:work", "--relay", "--poll", "20ms", "--max-jobs", "3", "--name", "w1")
		require.Equal(t, 0, code, stderr)
		require.Len(t, regexp.MustCompile(`DONE +default test\.Greet`).FindAllString(stdout, -1), 3, stdout)
		require.Zero(t, b.sizes(t, "default").Total())
	})
}

func TestWorkRelayWithoutAnOutbox(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	code, _, stderr := b.run(t, "queue:work", "--relay", "--max-jobs", "1")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "app queue:work: needs the application's outbox database")
}

// queue:monitor, not given the outbox database, shows the backlog a
// relay reported to Redis, and alerts on it.
func TestMonitorShowsTheOutbox(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	db := withOutbox(t, b)
	b.ok(t, "outbox:migrate")
	b.outbox = nil // the monitor reads what the relays published
	b.push(t, "default", greet{"x"})
	out := b.ok(t, "queue:monitor")
	require.NotContains(t, out, "Outbox", "no relay has reported")

	_, err := db.Exec("INSERT INTO " + b.outboxTable + " (id, kind, queue, name, payload, created_at) VALUES " +
		"('old', 'job', 'default', 'test.Greet', '\\x00', now() - interval '10 minutes'), ('bad', 'nonsense', 'default', 'x', '\\x00', now())")
	require.NoError(t, err)
	cfg := b.engine.Config()
	cfg.OutboxTable = b.outboxTable
	e, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
	require.NoError(t, err)
	r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db})
	require.NoError(t, err)
	// One claim parks the bad row and pushes the old one; Run reports.
	ctx, cancel := context.WithCancel(b.ctx)
	go func() { _ = r.Run(ctx) }()
	require.Eventually(t, func() bool {
		got, ok, err := runtime.NewInspector(e).Outbox(b.ctx)
		return err == nil && ok && got.Rows == 1 && got.Parked == 1
	}, 10*time.Second, 20*time.Millisecond)
	cancel()
	out = b.ok(t, "queue:monitor", "--max-outbox-age", "1m")
	require.Contains(t, out, "Outbox "+b.outboxTable+": 1 row waiting (1 parked: see its error column)")

	_, err = db.Exec("UPDATE " + b.outboxTable + " SET error = NULL")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO " + b.outboxTable + " (id, kind, queue, name, payload, created_at) VALUES " +
		"('late', 'nonsense', 'default', 'x', '\\x00', now() - interval '10 minutes')")
	require.NoError(t, err)
	ctx, cancel = context.WithCancel(b.ctx)
	go func() { _ = r.Run(ctx) }()
	require.Eventually(t, func() bool {
		got, _, err := runtime.NewInspector(e).Outbox(b.ctx)
		return err == nil && got.Rows == 2 && got.Parked == 2
	}, 10*time.Second, 20*time.Millisecond)
	cancel()
	_, err = db.Exec("UPDATE " + b.outboxTable + " SET error = NULL WHERE id = 'late'")
	require.NoError(t, err)
	// The relay's reading is what the monitor shows: 2 rows, the oldest
	// 10 minutes old.
	code, out, stderr := b.run(t, "queue:monitor", "--max-outbox-age", "1m")
	require.Equal(t, 1, code, out)
	require.Contains(t, stderr, "outbox "+b.outboxTable+" (oldest row waited 10m")
}
