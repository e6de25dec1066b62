package laravel_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver, for job_batches
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// BatchedReport is App\Jobs\BatchedReport (testdata/php/jobs_batch.php),
// a Batchable job.
type BatchedReport struct {
	ReportID int `php:"reportId"`
}

func (BatchedReport) JobName() string                { return "test.BatchedReport" }
func (BatchedReport) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j BatchedReport) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// batchRow is a job_batches row as batch.php shows it.
type batchRow struct {
	TotalJobs    int     `json:"total_jobs"`
	PendingJobs  int     `json:"pending_jobs"`
	FailedJobs   int     `json:"failed_jobs"`
	FailedJobIDs string  `json:"failed_job_ids"`
	FinishedAt   *int64  `json:"finished_at"`
	CancelledAt  *int64  `json:"cancelled_at"`
	Options      *string `json:"options"`
}

// setupBatches gives b's PHP scripts a job_batches table of the test's
// own on the PostgreSQL server of JOBGEN_TEST_POSTGRES_URL, made by
// Laravel's migration.
func setupBatches(t *testing.T, ctx context.Context, b *phpBundle) {
	t.Helper()
	dbURL := pgtest.URL(t)
	db, err := sql.Open("postgres", dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	b.env = append(b.env, "DB_HOST="+u.Hostname(), "DB_PORT="+u.Port(), "DB_DATABASE="+strings.TrimPrefix(u.Path, "/"),
		"DB_USERNAME="+u.User.Username(), "BATCH_TABLE="+table)
	b.run(t, ctx, "batch.php", "migrate")
}

// dispatchBatch dispatches a batch of n BatchedReport jobs onto queue
// with Laravel's PendingBatch, and returns its ID.
func (b phpBundle) dispatchBatch(t *testing.T, ctx context.Context, queue string, n string) string {
	t.Helper()
	out, err := b.command(ctx, "batch.php", "dispatch", queue, n).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

func (b phpBundle) batch(t *testing.T, ctx context.Context, id string) batchRow {
	t.Helper()
	out, err := b.command(ctx, "batch.php", "show", id).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var row batchRow
	require.NoError(t, json.Unmarshal(out, &row), "%s", out)
	return row
}

// batchWorker is a Go worker of BatchedReport on queue that notes what it
// runs.
func (b phpBundle) batchWorker(t *testing.T, queue string, ran *[]int, cfg laravel.WorkerConfig) *laravel.Worker {
	t.Helper()
	m := laravel.NewMapper()
	laravel.Map[BatchedReport](m, `App\Jobs\BatchedReport`, BatchedReport{}.JobName())
	r := runtime.NewRouter()
	runtime.Register(r, BatchedReport{}.JobName(), func(_ context.Context, j BatchedReport) error {
		*ran = append(*ran, j.ReportID)
		return nil
	})
	cfg.Queues, cfg.StopWhenEmpty = []string{queue}, true
	cfg.Failed = runtime.NewInspector(b.engine).Failed()
	w, err := laravel.NewWorker(b.q, m, r, cfg)
	require.NoError(t, err)
	return w
}

// A job of a Laravel batch never runs outside its batch: a Go worker
// leaves the jobs of a real Bus::batch (job_batches on PostgreSQL) on
// their queue, untouched, and Laravel's worker runs them, records them
// in the batch and fires its then and finally callbacks once each. With
// FailUnmapped a Go worker fails them, naming the batch.
func TestBatchIsLeftForPHP(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	setupBatches(t, ctx, &b)
	id := b.dispatchBatch(t, ctx, "reports", "3")
	require.Equal(t, batchRow{TotalJobs: 3, PendingJobs: 3, FailedJobIDs: "[]"}, withoutOptions(b.batch(t, ctx, id)))
	before, err := b.q.Client().LRange(ctx, b.prefix+"queues:reports", 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, before, 3)

	var ran []int
	w := b.batchWorker(t, "reports", &ran, laravel.WorkerConfig{})
	require.NoError(t, w.Run(ctx))
	require.Empty(t, ran, "the Go worker ran no job of the batch")
	after, err := b.q.Client().LRange(ctx, b.prefix+"queues:reports", 0, -1).Result()
	require.NoError(t, err)
	require.Equal(t, before, after, "left as they were pushed")
	require.GreaterOrEqual(t, w.LeftForPHP()[`App\Jobs\BatchedReport (batch)`], int64(1))
	n, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, n)

	b.run(t, ctx, "batch.php", "work", "reports")
	row := b.batch(t, ctx, id)
	require.NotNil(t, row.FinishedAt, "the batch finished")
	require.Equal(t, batchRow{TotalJobs: 3, PendingJobs: 0, FailedJobIDs: "[]", FinishedAt: row.FinishedAt}, withoutOptions(row))
	var got []string
	for _, l := range b.results(t, ctx) {
		if !strings.HasPrefix(l, "processed|") {
			got = append(got, l)
		}
	}
	require.ElementsMatch(t, []string{
		"ran|BatchedReport|0|1", "ran|BatchedReport|1|1", "ran|BatchedReport|2|1",
		"then|" + id, "finally|" + id,
	}, got, "then and finally fired once each")

	// On a queue only Go serves, FailUnmapped fails them, naming the batch.
	id = b.dispatchBatch(t, ctx, "reports-go", "3")
	w = b.batchWorker(t, "reports-go", &ran, laravel.WorkerConfig{FailUnmapped: true})
	require.NoError(t, w.Run(ctx))
	require.Empty(t, ran)
	list, err := runtime.NewInspector(b.engine).Failed().List(ctx, "laravel", 0, 10)
	require.NoError(t, err)
	require.Len(t, list, 3)
	for _, fj := range list {
		require.Contains(t, fj.Error, `App\Jobs\BatchedReport is a job of batch `+id+`, whose job_batches row and then, catch and finally callbacks only Laravel's worker updates and calls`)
	}
}

func withoutOptions(r batchRow) batchRow {
	r.Options = nil
	return r
}
