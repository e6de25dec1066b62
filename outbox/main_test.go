package outbox_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// mailJob is a job dispatched through the outbox.
type mailJob struct {
	To     string
	Unique string
}

func (mailJob) JobName() string    { return "test.Mail" }
func (j mailJob) UniqueID() string { return j.Unique }
func (j mailJob) JobOptions() runtime.JobOptions {
	if j.Unique != "" {
		return runtime.JobOptions{Queue: "mail", UniqueFor: time.Minute}
	}
	return runtime.JobOptions{Queue: "mail"}
}
func (j mailJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// itemJob is a job of a batch.
type itemJob struct{ N int }

func (itemJob) JobName() string                { return "test.Item" }
func (itemJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j itemJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// bundle is what a relay test needs: an engine on a backend, a database
// with an outbox table of the test's own, and a relay.
type bundle struct {
	ctx    context.Context
	engine *runtime.Engine
	rdb    redis.UniversalClient
	keys   keyspace.Keys
	db     *sql.DB
	table  string
	relay  *outbox.Relay
}

// forEachBackend runs fn against each backend (a real Redis, the
// embedded one, a cluster if there is one), with a fresh prefix and
// outbox table each.
func forEachBackend(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b bundle)) {
	t.Helper()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, be, db, cfg))
		})
	}
}

func setup(t *testing.T, be redistest.Backend, db *sql.DB, cfg runtime.EngineConfig) bundle {
	t.Helper()
	ctx := context.Background()
	cfg.Prefix = redistest.Prefix(t)
	cfg.OutboxTable = pgtest.Table(t, db)
	e, err := runtime.Open(ctx, be.URL, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, runtime.MigrateOutbox(ctx, db, cfg.OutboxTable))
	r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db})
	require.NoError(t, err)
	return bundle{ctx: runtime.WithDispatcher(ctx, e), engine: e, rdb: e.Client(), keys: keyspace.New(cfg.Prefix),
		db: db, table: cfg.OutboxTable, relay: r}
}

// rows returns the number of rows in the outbox table.
func (b bundle) rows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.QueryRowContext(b.ctx, "SELECT count(*) FROM "+b.table).Scan(&n))
	return n
}

// tx runs fn in a transaction, and commits it if commit holds.
func (b bundle) tx(t *testing.T, commit bool, fn func(tx *sql.Tx)) {
	t.Helper()
	tx, err := b.db.BeginTx(b.ctx, nil)
	require.NoError(t, err)
	// A failed assertion in fn must not leave tx open, holding locks that
	// the table's cleanup would wait on.
	defer func() { _ = tx.Rollback() }()
	fn(tx)
	if commit {
		require.NoError(t, tx.Commit())
	} else {
		require.NoError(t, tx.Rollback())
	}
}

// relayAll relays until the table holds nothing the relay would claim.
func (b bundle) relayAll(t *testing.T) {
	t.Helper()
	for range 100 {
		n, err := b.relay.RelayOnce(b.ctx)
		require.NoError(t, err)
		if n == 0 {
			return
		}
	}
	t.Fatal("the relay did not empty the outbox")
}

func (b bundle) sizes(t *testing.T, queue string) runtime.Sizes {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	return s
}

func (b bundle) reserve(t *testing.T, queue string, n int) runtime.ReserveResult {
	t.Helper()
	res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, n, time.Minute)
	require.NoError(t, err)
	return res
}

// marks returns the marks of queue's relayed set with their scores.
func (b bundle) marks(t *testing.T, queue string) map[string]float64 {
	t.Helper()
	zs, err := b.rdb.ZRangeWithScores(b.ctx, b.keys.Relayed(queue), 0, -1).Result()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, z := range zs {
		out[z.Member.(string)] = z.Score
	}
	return out
}

// ageMarks makes the pending marks of queue's relayed set look pushed by
// earlier.
func (b bundle) ageMarks(t *testing.T, queue string, by time.Duration) {
	t.Helper()
	for m, s := range b.marks(t, queue) {
		if s >= 1e15 {
			require.NoError(t, b.rdb.ZAdd(b.ctx, b.keys.Relayed(queue), redis.Z{Score: s - float64(by.Milliseconds()), Member: m}).Err())
		}
	}
}

// decodeMail decodes a reserved mailJob.
func decodeMail(t *testing.T, r runtime.Reservation) (*runtime.Envelope, mailJob) {
	t.Helper()
	env, err := runtime.DecodeEnvelope(r.Queue, r.ID, r.Payload)
	require.NoError(t, err)
	j, err := runtime.Decode[mailJob](env.Body)
	require.NoError(t, err)
	return env, j
}
