package sqlitetest_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql's "sqlite" driver

	"github.com/jobgen/jobgen/internal/phptest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// SendWelcomeEmail is App\Jobs\SendWelcomeEmail of laravel/testdata/php.
type SendWelcomeEmail struct {
	UserID int      `php:"userId"`
	Email  string   `php:"email,protected"`
	Tags   []string `php:"tags,private"`
}

func (SendWelcomeEmail) JobName() string                { return "test.SendWelcomeEmail" }
func (SendWelcomeEmail) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j SendWelcomeEmail) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// ResizeAvatar is App\Jobs\ResizeAvatar, which push.php pushes too.
type ResizeAvatar struct {
	UserID  int      `php:"userId"`
	Sizes   []int    `php:"sizes"`
	Quality *float64 `php:"quality"`
}

func (ResizeAvatar) JobName() string                { return "test.ResizeAvatar" }
func (ResizeAvatar) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j ResizeAvatar) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// A job that fails on a Go worker lands in the app's failed_jobs table
// on SQLite; Laravel's own provider lists it, Laravel's queue:retry puts
// it back, and a Go worker runs it.
func TestFailedJobsOnSQLite(t *testing.T) {
	php := phptest.Laravel(t)
	addr := redistest.Addr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := redistest.Prefix(t) + "_laravel_database_"
	q, closeQ, err := laravel.Open(ctx, laravel.Scheme+"redis://"+addr+"/0?prefix="+prefix)
	require.NoError(t, err)
	defer func() { _ = closeQ() }()

	file := filepath.Join(t.TempDir(), "app.sqlite")
	env := append(os.Environ(), "REDIS_HOST="+host, "REDIS_PORT="+port, "REDIS_DB=0", "REDIS_PREFIX="+prefix,
		"DB_DRIVER=sqlite", "DB_DATABASE="+file, "FAILED_TABLE=failed_jobs")
	runPHP := func(args ...string) string {
		cmd := exec.CommandContext(ctx, php, append([]string{filepath.Join("..", "testdata", "php", args[0])}, args[1:]...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "php %v: %s", args, out)
		return string(out)
	}
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	runPHP("failed.php", "migrate")
	runPHP("push.php", "1", "emails")

	db, err := sql.Open("sqlite", file)
	require.NoError(t, err)
	defer db.Close()
	m := laravel.NewMapper()
	laravel.Map[SendWelcomeEmail](m, `App\Jobs\SendWelcomeEmail`, SendWelcomeEmail{}.JobName())
	laravel.Map[ResizeAvatar](m, `App\Jobs\ResizeAvatar`, ResizeAvatar{}.JobName())
	var broken atomic.Bool
	broken.Store(true)
	var ran atomic.Int32
	r := runtime.NewRouter()
	runtime.Register(r, SendWelcomeEmail{}.JobName(), func(context.Context, SendWelcomeEmail) error {
		if broken.Load() {
			return runtime.FailRequest(errors.New("the mail server refused the message"))
		}
		ran.Add(1)
		return nil
	})
	runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return nil })
	work := func() {
		w, err := laravel.NewWorker(q, m, r, laravel.WorkerConfig{
			Queues: []string{"emails"}, Sleep: 50 * time.Millisecond, StopWhenEmpty: true,
			FailedJobs: &laravel.FailedJobs{DB: db, Placeholders: "?"},
		})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
	}
	work()

	listed := strings.TrimSpace(runPHP("failed.php", "list"))
	require.Equal(t, 1, strings.Count(listed, "\n")+1, listed)
	require.Contains(t, listed, `"queue":"emails"`)
	require.Contains(t, listed, `"connection":"redis"`)
	require.Contains(t, listed, "the mail server refused the message")
	var uuid string
	require.NoError(t, db.QueryRowContext(ctx, "SELECT uuid FROM failed_jobs").Scan(&uuid))

	runPHP("failed.php", "retry", uuid)
	require.Empty(t, strings.TrimSpace(runPHP("failed.php", "list")), "queue:retry forgets it")
	broken.Store(false)
	work()
	require.Equal(t, int32(1), ran.Load(), "the retried job ran")
}
