package laravel_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver, for failed_jobs
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// failedRow is a row of failed_jobs as failed.php lists it.
type failedRow struct {
	ID         string `json:"id"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Class      string `json:"class"`
	Exception  string `json:"exception"`
}

// A job that fails on a Go worker lands in the app's failed_jobs table;
// Laravel's own provider lists it, Laravel's queue:retry puts it back,
// and a worker runs it.
func TestFailedJobsRoundTripWithLaravel(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	dbURL := pgtest.URL(t)
	db, err := sql.Open("postgres", dbURL)
	require.NoError(t, err)
	defer db.Close()
	table := pgtest.Table(t, db)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	b.env = append(b.env, "DB_HOST="+u.Hostname(), "DB_PORT="+u.Port(), "DB_DATABASE="+strings.TrimPrefix(u.Path, "/"),
		"DB_USERNAME="+u.User.Username(), "FAILED_TABLE="+table)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.run(t, ctx, "failed.php", "migrate")
	b.run(t, ctx, "push.php", "1", "emails")

	// The first run fails for good; after the retry, the job succeeds.
	var broken atomic.Bool
	broken.Store(true)
	var ran atomic.Int32
	rt := runtime.NewRouter()
	runtime.Register(rt, SendWelcomeEmail{}.JobName(), func(ctx context.Context, j SendWelcomeEmail) error {
		if broken.Load() {
			return runtime.FailRequest(errors.New("the mail server refused the message"))
		}
		ran.Add(1)
		return nil
	})
	runtime.Register(rt, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return nil })
	runRound := func() {
		w, err := laravel.NewWorker(b.q, newMapper(), rt, laravel.WorkerConfig{
			Queues: []string{"emails"}, Sleep: 50 * time.Millisecond, StopWhenEmpty: true,
			FailedJobs: &laravel.FailedJobs{DB: db, Table: table},
		})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
	}
	runRound()

	list := func() []failedRow {
		cmd := b.command(ctx, "failed.php", "list")
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		var rows []failedRow
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			var r failedRow
			require.NoError(t, json.Unmarshal([]byte(line), &r), line)
			rows = append(rows, r)
		}
		return rows
	}
	rows := list()
	require.Len(t, rows, 1)
	require.Equal(t, "redis", rows[0].Connection)
	require.Equal(t, "emails", rows[0].Queue)
	require.Equal(t, `App\Jobs\SendWelcomeEmail`, rows[0].Class)
	require.Contains(t, rows[0].Exception, "the mail server refused the message")
	sizes, err := b.q.Sizes(ctx, "emails")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes, "the job left its queue")
	n, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, n, "nothing in jobgen's failed store")

	var uuid string
	require.NoError(t, db.QueryRowContext(ctx, "SELECT uuid FROM "+table).Scan(&uuid))
	b.run(t, ctx, "failed.php", "retry", uuid)
	require.Empty(t, list(), "queue:retry forgets it")
	sizes, err = b.q.Sizes(ctx, "emails")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{Ready: 1}, sizes, "queue:retry put it back")

	broken.Store(false)
	runRound()
	require.Equal(t, int32(1), ran.Load(), "the retried job ran")
	require.Empty(t, list())
}

func TestFailedJobsConfigIsChecked(t *testing.T) {
	t.Parallel()
	q, closeQ, err := laravel.Open(context.Background(), laravel.Scheme+"redis://127.0.0.1:1/0")
	require.NoError(t, err)
	defer func() { _ = closeQ() }()
	for _, tc := range []struct {
		cfg  laravel.WorkerConfig
		want string
	}{
		{laravel.WorkerConfig{}, "laravel.WorkerConfig.Failed or FailedJobs is required"},
		{laravel.WorkerConfig{FailedJobs: &laravel.FailedJobs{}}, "laravel.FailedJobs.DB is required"},
		{laravel.WorkerConfig{FailedJobs: &laravel.FailedJobs{DB: &sql.DB{}, Table: "x; drop"}}, `laravel.FailedJobs.Table "x; drop"`},
		{laravel.WorkerConfig{FailedJobs: &laravel.FailedJobs{DB: &sql.DB{}, Placeholders: ":"}}, `Placeholders ":"`},
	} {
		_, err := laravel.NewWorker(q, newMapper(), runtime.NewRouter(), tc.cfg)
		require.ErrorIs(t, err, runtime.ErrInvalid, fmt.Sprint(tc.cfg))
		require.ErrorContains(t, err, tc.want)
	}
}
