package laravel_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// laravelSourceEnv names a directory that holds Laravel's framework
// source by version, 10.x/src/Illuminate to 13.x/src/Illuminate (git
// archive of github.com/laravel/framework's branches), for the tests that
// run those versions' own workers (testdata/versions/work.php).
const laravelSourceEnv = "JOBGEN_TEST_LARAVEL_SRC"

// Laravel 10 to 13's own workers, run from their source, run what a Go
// Dispatcher set to their version dispatched, and free its unique lock
// at their key; Laravel 13's deletes a superseded debounced job unrun,
// and runs the newest, as the Go worker does (TestLaravel13DebouncedJobs).
func TestLaravelVersionsWorkerFromSource(t *testing.T) {
	root := os.Getenv(laravelSourceEnv)
	if root == "" {
		t.Skip(laravelSourceEnv + " is not set: no Laravel 10 to 13 source to run")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := setupPHP(t)
	m := newMapper()
	laravel.Map[UniqueReport](m, `App\Jobs\UniqueReport`, UniqueReport{}.JobName())
	work := func(dir, queue string) {
		t.Helper()
		src := filepath.Join(root, dir)
		_, err := os.Stat(filepath.Join(src, "src", "Illuminate", "Queue", "Worker.php"))
		require.NoError(t, err, "%s: want Laravel's source", src)
		cmd := exec.CommandContext(ctx, b.php, filepath.Join("testdata", "versions", "work.php"), src, queue)
		cmd.Env = b.env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", dir, out)
	}
	for _, v := range laravelVersions[1:] {
		q := openVersion(t, b, v.major)
		d, err := laravel.NewDispatcher(q, m)
		require.NoError(t, err)
		queue := fmt.Sprintf("src%d", v.major)
		_, err = dispatch(ctx, d, runtime.NewPendingDispatch(SendWelcomeEmail{UserID: 7, Email: "ada@example.com", Tags: []string{"go", "n7"}}).OnQueue(queue))
		require.NoError(t, err, v.dir)
		_, err = dispatch(ctx, d, runtime.NewPendingDispatch(UniqueReport{ReportID: 5}).OnQueue(queue))
		require.NoError(t, err, v.dir)
		lock := b.prefix + "laravel_cache:" + lockKeys(t, v.dir)["unique"]
		require.Equal(t, int64(1), q.Client().Exists(ctx, lock).Val(), v.dir)

		require.NoError(t, q.Client().Del(ctx, b.prefix+"results").Err())
		work(v.dir, queue)
		require.ElementsMatch(t, []string{"ran|SendWelcomeEmail|7|ada@example.com|go,n7|1", "ran|UniqueReport|5"}, b.results(t, ctx), v.dir)
		require.Zero(t, q.Client().Exists(ctx, lock).Val(), "%s: Laravel's worker freed the lock Go took, at its version's key", v.dir)
	}

	q := openVersion(t, b, 13)
	lock := b.prefix + "laravel_cache:" + lockKeys(t, "13.x")["debounce"]
	owner := "owner-of-the-newest-dispatch-0000000000000"
	serialized := func(s string) string { return fmt.Sprintf("s:%d:%q;", len(s), s) }
	for _, tc := range []struct {
		lock string
		want string
	}{
		{serialized("owner-of-a-later-dispatch-000000000000000"), `debounced|App\Jobs\DebouncedSync`},
		{serialized(owner), "ran|DebouncedSync|11"},
	} {
		require.NoError(t, q.Client().Set(ctx, lock, tc.lock, time.Minute).Err())
		require.NoError(t, q.Client().Del(ctx, b.prefix+"results").Err())
		require.NoError(t, q.Push(ctx, "debounce", fixture(t, "13.x", "debounced_sync")))
		work("13.x", "debounce")
		require.Equal(t, []string{tc.want}, b.results(t, ctx))
	}
}
