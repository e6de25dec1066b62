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
	for _, be := range redistest.Backends(t) {
		if be.Name == "cluster" {
			continue // queues:high and queues:default are in different slots, without HashTag
		}
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			prefix := redistest.Prefix(t) + "_"
			q, closeQ, err := laravel.Open(ctx, laravel.Scheme+be.URL+"?prefix="+prefix)
			require.NoError(t, err)
			defer closeQ()
			engine, err := runtime.Open(ctx, "embedded://"+redistest.Prefix(t), runtime.EngineConfig{})
			require.NoError(t, err)
			defer engine.Close()
			require.NoError(t, q.Client().Set(ctx, prefix+"queues:high", "oops", 0).Err())

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
				Failed: runtime.NewInspector(engine).Failed(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			require.NoError(t, w.Run(ctx))
			require.Equal(t, 1, ran, "the job on default ran")
			require.Equal(t, 1, strings.Count(logs.String(), "pop failed"), "the broken queue is reported once:\n%s", logs.String())
			require.Contains(t, logs.String(), "WRONGTYPE")
		})
	}
}
