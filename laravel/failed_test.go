package laravel_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// A job that fails for good on the Go side goes to jobgen's failed store
// with the payload Laravel pushed; Retry puts it back on its Laravel
// queue, attempts reset, where Laravel's worker runs it.
func TestFailedJobRetriesToLaravel(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.run(t, ctx, "push.php", "1", "default") // SendWelcomeEmail 0, tries 3
	raw, err := b.q.Client().LIndex(ctx, b.prefix+"queues:default", 0).Result()
	require.NoError(t, err)

	r := runtime.NewRouter()
	failed := make(chan error, 1)
	runtime.Register(r, SendWelcomeEmail{}.JobName(), func(ctx context.Context, j SendWelcomeEmail) error {
		return runtime.FailRequest(errors.New("mail server says no"))
	}, runtime.OnFailed(func(ctx context.Context, j SendWelcomeEmail, err error) { failed <- err }))
	runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return nil })
	w, err := laravel.NewWorker(b.q, newMapper(), r, laravel.WorkerConfig{StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed()})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.ErrorContains(t, <-failed, "mail server says no", "the failed hook ran")

	list, err := runtime.NewInspector(b.engine).Failed().List(ctx, "laravel", 0, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	fj := list[0]
	require.Equal(t, laravel.RequeueJobName, fj.Name)
	require.Contains(t, fj.Error, "mail server says no")
	require.Equal(t, 1, fj.Attempts)
	env, err := runtime.DecodeEnvelope(fj.Queue, fj.ID, fj.Payload)
	require.NoError(t, err)
	rq, err := runtime.Decode[laravel.Requeue](env.Body)
	require.NoError(t, err)
	require.Equal(t, raw, string(rq.Payload), "the payload as Laravel pushed it")
	require.Equal(t, "default", rq.Queue)
	sizes, err := b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes, "deleted from the Laravel queue")

	done, err := laravel.Retry(ctx, runtime.NewInspector(b.engine).Failed(), b.q, "laravel", fj.ID)
	require.NoError(t, err)
	require.Equal(t, []string{fj.ID}, done)
	n, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, n)

	b.run(t, ctx, "work.php", "default", "1", "60", "0", "1", "0")
	require.Contains(t, b.results(t, ctx), "ran|SendWelcomeEmail|0|user0@example.com|welcome,n0|1", "Laravel ran it, attempts reset")
}

// queue:retry of jobgen (FailedStore.Retry) pushes a failed Laravel job
// onto jobgen's queue; a jobgen worker with RegisterRequeue puts it back
// on its Laravel queue.
func TestQueueRetryThroughJobgenWorker(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A payload no Go type is mapped to fails at once, on a queue only Go serves.
	require.NoError(t, b.q.Push(ctx, "default", []byte(`{"uuid":"u-1","displayName":"App\\Jobs\\Unknown","job":"App\\Jobs\\Unknown@handle","maxTries":null,"data":{"x":1},"id":"i-1","attempts":0}`)))
	w, err := laravel.NewWorker(b.q, newMapper(), newRecorder(-1).router(), laravel.WorkerConfig{StopWhenEmpty: true, FailUnmapped: true, Failed: runtime.NewInspector(b.engine).Failed()})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	fj, ok, err := runtime.NewInspector(b.engine).Failed().Get(ctx, "laravel", "u-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Contains(t, fj.Error, "no handler registered")

	_, err = runtime.NewInspector(b.engine).Failed().Retry(ctx, "laravel", "u-1")
	require.NoError(t, err)
	r := runtime.NewRouter()
	laravel.RegisterRequeue(r, b.q)
	jw, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"laravel"}, StopWhenEmpty: true})
	require.NoError(t, err)
	require.NoError(t, jw.Run(ctx))

	got, err := b.q.Client().LIndex(ctx, b.prefix+"queues:default", 0).Result()
	require.NoError(t, err)
	p, err := laravel.DecodePayload([]byte(got))
	require.NoError(t, err)
	require.Equal(t, "u-1", p.UUID)
	require.Zero(t, p.Attempts)
	require.JSONEq(t, `{"x":1}`, string(p.Data))
}

// Laravel's queue:restart stops a Go worker that shares the cache's
// Redis.
func TestRestartSignal(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := laravel.NewWorker(b.q, newMapper(), newRecorder(-1).router(), laravel.WorkerConfig{Sleep: 100 * time.Millisecond, Failed: runtime.NewInspector(b.engine).Failed()})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.run(t, ctx, "restart.php") // after NewWorker read the mark (there was none)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("the worker did not stop at queue:restart")
	}
	mark, ok, err := b.q.RestartMark(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.InDelta(t, time.Now().Unix(), mark, 60)
}

// signalHandler is a slog handler that closes ch at a record whose
// message is msg.
type signalHandler struct {
	slog.Handler
	msg  string
	once *sync.Once
	ch   chan struct{}
}

func (h signalHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}

func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

// At queue:restart a Go worker takes no new job and lets its running
// job finish, as Laravel's does.
func TestRestartLetsRunningJobFinish(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.run(t, ctx, "push.php", "2", "default") // two jobs: one runs, one waits

	stopping := make(chan struct{})
	logger := slog.New(signalHandler{Handler: slog.Default().Handler(), msg: "queue:restart signalled; stopping", once: new(sync.Once), ch: stopping})
	started := make(chan struct{}, 2)
	r := runtime.NewRouter()
	var cancelled bool
	runtime.Register(r, SendWelcomeEmail{}.JobName(), func(ctx context.Context, j SendWelcomeEmail) error {
		started <- struct{}{}
		select {
		case <-stopping: // the worker has seen the restart: finish now
		case <-ctx.Done():
			cancelled = true
		}
		return nil
	})
	runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return nil })
	w, err := laravel.NewWorker(b.q, newMapper(), r, laravel.WorkerConfig{Sleep: 100 * time.Millisecond, Failed: runtime.NewInspector(b.engine).Failed(), Logger: logger})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	<-started
	b.run(t, ctx, "restart.php")
	require.NoError(t, <-done)
	require.False(t, cancelled, "the running job was not cancelled")
	sizes, err := b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{Ready: 1}, sizes, "the running job finished; the other was not taken")
}
