package failedsql_test

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/failedsql"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

type charge struct{ Invoice int }

func (charge) JobName() string                { return "test.Charge" }
func (charge) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "billing", Tries: 1} }
func (j charge) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type testBundle struct {
	ctx   context.Context
	db    *sql.DB
	table string
	store *failedsql.Store
	url   string
	cfg   runtime.EngineConfig
	e     *runtime.Engine
	runs  atomic.Int64
	// failAll makes every run fail, not only the first.
	failAll atomic.Bool
	r       *runtime.Router
}

func setup(t *testing.T, be redistest.Backend) *testBundle {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db)
	store, err := failedsql.New(failedsql.Config{DB: db, Table: table})
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx))
	require.NoError(t, store.Migrate(ctx), "safe to run twice")
	b := &testBundle{ctx: ctx, db: db, table: table, store: store, url: be.URL,
		cfg: runtime.EngineConfig{Prefix: redistest.Prefix(t), FailedStore: store}, r: runtime.NewRouter()}
	b.e = b.engine(t, b.cfg)
	// The first run fails; the others succeed.
	runtime.Register(b.r, "test.Charge", func(ctx context.Context, j charge) error {
		if n := b.runs.Add(1); n == 1 || b.failAll.Load() {
			return errors.New("card declined")
		}
		return nil
	})
	return b
}

func (b *testBundle) engine(t *testing.T, cfg runtime.EngineConfig) *runtime.Engine {
	t.Helper()
	e, err := runtime.Open(b.ctx, b.url, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func (b *testBundle) work(t *testing.T) {
	t.Helper()
	w, err := runtime.NewWorker(b.e, b.r, runtime.WorkerConfig{Queues: []string{"billing"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
}

func (b *testBundle) rows(t *testing.T) (n int) {
	t.Helper()
	require.NoError(t, b.db.QueryRow("SELECT count(*) FROM "+b.table).Scan(&n))
	return n
}

func eachBackend(t *testing.T, fn func(t *testing.T, b *testBundle)) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, be))
		})
	}
}

// crashAfterPush is the table through a process that dies once its
// Retry has pushed the jobs, before its transaction commits: the
// transaction rolls back, and the rows stay.
type crashAfterPush struct{ *failedsql.Store }

func (c crashAfterPush) Retry(ctx context.Context, queue string, ids []string, r runtime.FailedRetry) ([]string, error) {
	txCtx, die := context.WithCancel(ctx)
	defer die()
	push := r.Push
	r.Push = func(ctx context.Context, jobs []runtime.FailedJob) ([]bool, error) {
		pushed, err := push(ctx, jobs)
		die()
		return pushed, err
	}
	return c.Store.Retry(txCtx, queue, ids, r)
}

// A retry that dies after its push and before its commit leaves the row;
// the job runs, and the next retry finds the job's mark: it deletes the
// row and pushes nothing, so the job runs once, not twice.
func TestRetryCrashAfterPushRunsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *testBundle) {
		id, err := runtime.Dispatch(runtime.WithDispatcher(b.ctx, b.e), charge{Invoice: 1})
		require.NoError(t, err)
		b.work(t)
		require.Equal(t, 1, b.rows(t))

		crashCfg := b.cfg
		crashCfg.FailedStore = crashAfterPush{b.store}
		crashing := b.engine(t, crashCfg)
		_, err = runtime.NewInspector(crashing).Failed().Retry(b.ctx, "billing", id)
		require.Error(t, err, "the retry died before its commit")
		require.Equal(t, 1, b.rows(t), "its row stays")
		sizes, err := runtime.NewInspector(b.e).Sizes(b.ctx, "billing")
		require.NoError(t, err)
		require.Equal(t, int64(1), sizes.Ready, "its job was pushed")

		b.work(t)
		require.Equal(t, int64(2), b.runs.Load(), "the retried job ran")

		done, err := runtime.NewInspector(b.e).Failed().Retry(b.ctx, "billing", id)
		require.NoError(t, err)
		require.Equal(t, []string{id}, done, "the row goes")
		require.Zero(t, b.rows(t))
		sizes, err = runtime.NewInspector(b.e).Sizes(b.ctx, "billing")
		require.NoError(t, err)
		require.Zero(t, sizes.Total(), "nothing is pushed again")
		b.work(t)
		require.Equal(t, int64(2), b.runs.Load(), "the job ran once after its retry, not twice")
	})
}

// A job that fails again after a retry is kept again, and a retry of it
// pushes it again: each failure has a mark of its own.
func TestRetryAgainAfterAnotherFailure(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *testBundle) {
		id, err := runtime.Dispatch(runtime.WithDispatcher(b.ctx, b.e), charge{Invoice: 1})
		require.NoError(t, err)
		b.work(t)
		b.runs.Store(0) // the retried job fails again
		_, err = runtime.NewInspector(b.e).Failed().Retry(b.ctx, "billing", id)
		require.NoError(t, err)
		b.work(t)
		require.Equal(t, 1, b.rows(t), "failed again, kept again")
		done, err := runtime.NewInspector(b.e).Failed().Retry(b.ctx, "billing", id)
		require.NoError(t, err)
		require.Equal(t, []string{id}, done)
		b.work(t)
		require.Equal(t, int64(2), b.runs.Load(), "and it ran again")
		require.Zero(t, b.rows(t))
	})
}

// Moving a failed job twice (a process that died between its save and
// its delete in Redis) keeps one row.
func TestSaveTwiceKeepsOneRow(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *testBundle) {
		at := time.UnixMilli(time.Now().UnixMilli())
		j := runtime.FailedJob{ID: "j1", Queue: "billing", Name: "test.Charge", Payload: []byte{1, 2}, Error: "declined", Attempts: 3, FailedAt: at,
			Errors: []runtime.AttemptError{{Attempt: 1, At: at.Add(-time.Second), Error: "timeout"}}}
		require.NoError(t, b.store.Save(b.ctx, []runtime.FailedJob{j}))
		require.NoError(t, b.store.Save(b.ctx, []runtime.FailedJob{j}))
		require.Equal(t, 1, b.rows(t))
		got, ok, err := b.store.Get(b.ctx, "billing", "j1")
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, got.FailedAt.Equal(at))
		got.FailedAt = at
		got.Errors[0].At = got.Errors[0].At.Local()
		j.Errors[0].At = j.Errors[0].At.Local()
		require.Equal(t, j, got)
		// Another failure of the same job, later, is a row of its own.
		j.FailedAt = at.Add(time.Minute)
		require.NoError(t, b.store.Save(b.ctx, []runtime.FailedJob{j}))
		require.Equal(t, 2, b.rows(t))
	})
}

// A partitioned queue's failed jobs move from each partition into the
// table; the queue's name lists, counts and retries them all.
func TestPartitionedQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *testBundle) {
		cfg := b.cfg
		cfg.Partitions = map[string]int{"billing": 3}
		b.e = b.engine(t, cfg)
		b.failAll.Store(true)
		ctx := runtime.WithDispatcher(b.ctx, b.e)
		for i := range 12 {
			_, err := runtime.Dispatch(ctx, charge{Invoice: i})
			require.NoError(t, err)
		}
		b.work(t)
		require.Equal(t, 12, b.rows(t))
		var parts int
		require.NoError(t, b.db.QueryRow("SELECT count(DISTINCT queue) FROM "+b.table).Scan(&parts))
		require.Greater(t, parts, 1, "the rows name the partitions")

		failed := runtime.NewInspector(b.e).Failed()
		n, err := failed.Count(b.ctx, "billing")
		require.NoError(t, err)
		require.Equal(t, int64(12), n)
		page, err := failed.List(b.ctx, "billing", 0, 5)
		require.NoError(t, err)
		require.Len(t, page, 5)
		b.failAll.Store(false)
		retried, err := failed.RetryAll(b.ctx, "billing")
		require.NoError(t, err)
		require.Equal(t, 12, retried)
		require.Zero(t, b.rows(t))
		b.work(t)
		require.Equal(t, int64(24), b.runs.Load(), "every retried job ran once")
	})
}
