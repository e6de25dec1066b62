package laravel_test

import (
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// pushEdited pushes onto queue the job push.php made, with edit applied
// to its payload's fields; it returns the payload's uuid.
func pushEdited(t *testing.T, ctx context.Context, b phpBundle, queue string, edit func(map[string]any)) string {
	t.Helper()
	b.run(t, ctx, "push.php", "1", queue)
	raw, err := b.q.Client().LPop(ctx, b.prefix+"queues:"+queue).Result()
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &fields))
	edit(fields)
	out, err := json.Marshal(fields)
	require.NoError(t, err)
	require.NoError(t, b.q.Push(ctx, queue, out))
	uuid, _ := fields["uuid"].(string)
	return uuid
}

// failedErrors runs queue on a Go worker until it is empty, with handlers
// that return err, and returns the errors of the jobs that failed.
func failedErrors(t *testing.T, ctx context.Context, b phpBundle, queue string, err error) []string {
	t.Helper()
	rt := runtime.NewRouter()
	runtime.Register(rt, SendWelcomeEmail{}.JobName(), func(context.Context, SendWelcomeEmail) error { return err })
	runtime.Register(rt, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return err })
	failed := runtime.NewInspector(b.engine).Failed()
	for range 20 {
		w, werr := laravel.NewWorker(b.q, newMapper(), rt, laravel.WorkerConfig{Queues: []string{queue}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true, Failed: failed})
		require.NoError(t, werr)
		require.NoError(t, w.Run(ctx))
		sizes, serr := b.q.Sizes(ctx, queue)
		require.NoError(t, serr)
		if sizes.Total() == 0 {
			break
		}
	}
	list, lerr := failed.List(ctx, "laravel", 0, 100)
	require.NoError(t, lerr)
	out := make([]string, len(list))
	for i, f := range list {
		out[i] = f.Error
	}
	return out
}

// A data.command that is a serialized array is no sealed job: the job
// fails saying what it holds, not asking for the app's key.
func TestSerializedArrayIsNotAnEncryptedCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setupPHP(t)
	pushEdited(t, ctx, b, "arrays", func(f map[string]any) {
		f["data"].(map[string]any)["command"] = `a:1:{s:6:"userId";i:7;}`
	})
	errs := failedErrors(t, ctx, b, "arrays", nil)
	require.Len(t, errs, 1)
	require.Contains(t, errs[0], `data.command of App\Jobs\SendWelcomeEmail is a serialized PHP value, an array, not a job object`)
	require.NotContains(t, errs[0], "sealed (ShouldBeEncrypted)")
}

// A job that reaches maxExceptions fails, and its count in the cache
// store (job-exceptions:UUID) goes with it, as Laravel's worker forgets
// it, rather than staying for a day.
func TestMaxExceptionsCountIsForgotten(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setupPHP(t)
	uuid := pushEdited(t, ctx, b, "flaky", func(f map[string]any) {
		f["maxTries"], f["maxExceptions"] = 10, 2
	})
	key := b.prefix + "laravel_cache:job-exceptions:" + uuid
	errs := failedErrors(t, ctx, b, "flaky", errors.New("the mail server is down"))
	require.Len(t, errs, 1)
	require.Contains(t, errs[0], "maximum exceptions")
	require.Zero(t, b.q.Client().Exists(ctx, key).Val(), "the count %s is forgotten", key)
}

// A unique job whose lock Laravel's cache holds is refused with an error
// that names no empty job ID: Laravel's lock records a random owner.
func TestDuplicateOfLaravelLockNamesNoEmptyJob(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := setupPHP(t)
	m := newMapper()
	laravel.Map[UniqueReport](m, `App\Jobs\UniqueReport`, UniqueReport{}.JobName())
	out, err := b.command(ctx, "dispatch_unique.php", "3", "1", "reports").Output()
	require.NoError(t, err, "%s", out)
	d, err := laravel.NewDispatcher(b.q, m)
	require.NoError(t, err)
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(UniqueReport{ReportID: 3}).OnQueue("reports"))
	var dup *runtime.DuplicateError
	require.ErrorAs(t, err, &dup)
	require.Contains(t, err.Error(), "is held by another job, which the lock does not name")
	require.NotRegexp(t, `held by job $`, err.Error())
}

// The package's doc says where failed jobs go, failed_jobs included.
func TestPackageDocNamesFailedJobs(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	require.NotContains(t, doc, "leaves it alone")
	require.Contains(t, doc, "WorkerConfig.FailedJobs")
	require.Contains(t, doc, "queue:prune-failed")
}
