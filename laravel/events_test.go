package laravel_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// The worker's events, in Laravel's names, in the order a job meets them.
func TestWorkerEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q, closeQ, err := laravel.Open(ctx, laravel.Scheme+"embedded://"+redistest.Prefix(t)+"?prefix=app_")
	require.NoError(t, err)
	defer closeQ()
	engine, err := runtime.Open(ctx, "embedded://"+redistest.Prefix(t), runtime.EngineConfig{})
	require.NoError(t, err)
	defer engine.Close()

	m := newMapper()
	d, err := laravel.NewDispatcher(q, m)
	require.NoError(t, err)
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(SendWelcomeEmail{UserID: 1}))
	require.NoError(t, err)
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(ResizeAvatar{UserID: 2}))
	require.NoError(t, err)

	r := runtime.NewRouter()
	runtime.Register(r, SendWelcomeEmail{}.JobName(), func(ctx context.Context, j SendWelcomeEmail) error {
		if info, _ := runtime.JobInfoFrom(ctx); info.Attempt == 1 {
			return errors.New("try again")
		}
		return nil
	})
	runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return runtime.FailRequest(errors.New("no")) })
	w, err := laravel.NewWorker(q, m, r, laravel.WorkerConfig{StopWhenEmpty: true, Failed: runtime.NewInspector(engine).Failed(), Name: "w1"})
	require.NoError(t, err)
	var mu sync.Mutex
	var got []string
	w.Subscribe(func(e runtime.Event) {
		mu.Lock()
		defer mu.Unlock()
		s := e.Kind.String() + " " + e.Name
		if e.Kind == runtime.WorkerStopping {
			s = e.Kind.String() + " " + e.Reason
		}
		require.Equal(t, "w1", e.Worker)
		got = append(got, s)
	})
	require.NoError(t, w.Run(ctx))
	require.Equal(t, []string{
		"JobProcessing test.SendWelcomeEmail",
		"JobExceptionOccurred test.SendWelcomeEmail",
		"JobReleased test.SendWelcomeEmail",
		"JobProcessing test.ResizeAvatar",
		"JobFailed test.ResizeAvatar",
		"JobProcessing test.SendWelcomeEmail",
		"JobProcessed test.SendWelcomeEmail",
		"WorkerStopping empty",
	}, got)
}
