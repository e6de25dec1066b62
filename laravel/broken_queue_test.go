package laravel_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// TestBrokenQueueStarvesNone: `SET queues:high oops`, a mapped job on
// default, and a worker on high,default. As Laravel's worker does, it
// runs the job on default, and reports the broken queue once.
func TestBrokenQueueStarvesNone(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
			defer cancel()
			q := b.q
			high := b.prefix + "queues:high"
			if q.Config().HashTag {
				high = b.prefix + "queues:{high}"
			}
			require.NoError(t, q.Client().Set(ctx, high, "oops", 0).Err())

			m := newMapper()
			d, err := laravel.NewDispatcher(q, m)
			require.NoError(t, err)
			_, err = dispatch(ctx, d, runtime.NewPendingDispatch(ResizeAvatar{UserID: 2}))
			require.NoError(t, err)

			ran := 0
			r := runtime.NewRouter()
			runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { ran++; return nil })
			runtime.Register(r, SendWelcomeEmail{}.JobName(), func(context.Context, SendWelcomeEmail) error { return nil })
			var logs bytes.Buffer
			w, err := laravel.NewWorker(q, m, r, laravel.WorkerConfig{Queues: []string{"high", "default"}, StopWhenEmpty: true,
				Failed: failedStore(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			require.NoError(t, w.Run(ctx))
			require.Equal(t, 1, ran, "the job on default ran")
			require.Equal(t, 1, strings.Count(logs.String(), "pop failed"), "the broken queue is reported once:\n%s", logs.String())
			require.Contains(t, logs.String(), "WRONGTYPE")
			require.GreaterOrEqual(t, w.PopErrors()["high"], int64(1), "and counted")
			require.Zero(t, w.PopErrors()["default"])
		})
	}
}

// TestUnmappedClassIsLeftForPHP: a job of a PHP class no Go type is
// mapped to, first on a queue a Go worker serves, stays there untouched,
// attempts and all, for a PHP worker; the worker says so once and counts
// it, and fails nothing.
func TestUnmappedClassIsLeftForPHP(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
			defer cancel()
			q := b.q
			failed := runtime.NewInspector(failedEngine(t))
			const phpOnly = `{"uuid":"u-php","displayName":"App\\Jobs\\ChargeCardPhpOnly","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":"App\\Jobs\\ChargeCardPhpOnly","command":"O:29:\"App\\Jobs\\ChargeCardPhpOnly\":0:{}"},"id":"i-php","attempts":0}`
			require.NoError(t, q.Push(ctx, "default", []byte(phpOnly)))

			r := runtime.NewRouter()
			runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return nil })
			runtime.Register(r, SendWelcomeEmail{}.JobName(), func(context.Context, SendWelcomeEmail) error { return nil })
			var logs bytes.Buffer
			w, err := laravel.NewWorker(q, newMapper(), r, laravel.WorkerConfig{StopWhenEmpty: true, Concurrency: 2,
				Failed: failed.Failed(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			require.NoError(t, w.Run(ctx))

			got, err := q.Client().LRange(ctx, b.keys(""), 0, -1).Result()
			require.NoError(t, err)
			require.Equal(t, []string{phpOnly}, got, "the job is on its queue as it was pushed")
			sizes, err := q.Sizes(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, laravel.Sizes{Ready: 1}, sizes, "nothing reserved or delayed")
			n, err := failed.Failed().Count(ctx, "laravel")
			require.NoError(t, err)
			require.Zero(t, n, "nothing failed")
			require.GreaterOrEqual(t, w.Unmapped()[`App\Jobs\ChargeCardPhpOnly`], int64(1))
			require.Equal(t, 1, strings.Count(logs.String(), "left on its queue for a PHP worker"), "said once:\n%s", logs.String())
		})
	}
}

// failedEngine is an engine of the test's own, on the embedded server,
// for the worker's failed store.
func failedEngine(t *testing.T) *runtime.Engine {
	t.Helper()
	e, err := runtime.Open(context.Background(), "embedded://"+redistest.Prefix(t), runtime.EngineConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// failedStore is the failed store of a failedEngine.
func failedStore(t *testing.T) *runtime.FailedStore {
	return runtime.NewInspector(failedEngine(t)).Failed()
}

// A worker whose connection's prefix holds none of its queues, while
// another prefix does, says so at start: it would wait forever.
func TestWrongPrefixIsReported(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := laravel.NewDispatcher(b.q, newMapper())
	require.NoError(t, err)
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(ResizeAvatar{UserID: 1}).OnQueue("prefixed"))
	require.NoError(t, err)
	wrong, closeQ, err := laravel.Open(ctx, strings.Replace(b.url, "prefix="+b.prefix, "prefix=wrong_"+b.prefix, 1))
	require.NoError(t, err)
	defer func() { _ = closeQ() }()
	var logs bytes.Buffer
	w, err := laravel.NewWorker(wrong, newMapper(), newRecorder(0).router(), laravel.WorkerConfig{Queues: []string{"prefixed"}, StopWhenEmpty: true,
		Failed: failedStore(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.Contains(t, logs.String(), "is the prefix right?")
	require.Contains(t, logs.String(), b.prefix+"queues:prefixed")

	// The right prefix says nothing of the kind.
	logs.Reset()
	w, err = laravel.NewWorker(b.q, newMapper(), newRecorder(0).router(), laravel.WorkerConfig{Queues: []string{"prefixed"}, StopWhenEmpty: true,
		Failed: failedStore(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.NotContains(t, logs.String(), "is the prefix right?")
}
