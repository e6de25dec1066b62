package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// TestDispatchMiddlewareSetsHeadersThatHandlersSee: dispatch middleware
// sees each call once with its kind, the headers it sets reach the
// handler through JobInfo, and a chain link's push names the job that
// pushed it.
func TestDispatchMiddlewareSetsHeadersThatHandlersSee(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		type seen struct {
			kind runtime.DispatchKind
			jobs int
			from string
		}
		var mu sync.Mutex
		var calls []seen
		b.engine.UseDispatch(func(ctx context.Context, out *runtime.DispatchCall, next func(context.Context) error) error {
			from := ""
			if out.From != nil {
				from = out.From.ID
			}
			mu.Lock()
			calls = append(calls, seen{out.Kind, len(out.Jobs), from})
			mu.Unlock()
			for _, j := range out.Jobs {
				require.NotEmpty(t, j.Envelope.ID)
				j.Envelope.Headers = map[string]string{"pushed-by": out.Kind.String()}
			}
			return next(ctx)
		})
		rec := &recorder{}
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			rec.add(ctx, info.Headers["pushed-by"])
			return nil
		})
		first, err := runtime.NewPendingDispatch(job(1, runtime.JobOptions{})).WithChain(job(2, runtime.JobOptions{})).Dispatch(b.ctx)
		require.NoError(t, err)
		e3, err := runtime.NewPendingDispatch(job(3, runtime.JobOptions{})).Envelope()
		require.NoError(t, err)
		e4, err := runtime.NewPendingDispatch(job(4, runtime.JobOptions{})).Envelope()
		require.NoError(t, err)
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: e3}, {Envelope: e4}}))
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})

		require.ElementsMatch(t, []string{"one", "link", "many", "many"}, rec.list())
		require.Equal(t, []seen{{runtime.DispatchKindOne, 1, ""}, {runtime.DispatchKindMany, 2, ""}, {runtime.DispatchKindLink, 1, first}}, calls)
	})
}

// TestStatesReadsManyQueuesAtOnce: States counts each queue's jobs by
// state and tells a paused queue, for queues with jobs and without.
func TestStatesReadsManyQueuesAtOnce(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("a", "x", "1")))
		require.NoError(t, b.engine.Push(b.ctx, env("a", "x", "2")))
		require.NoError(t, b.engine.Later(b.ctx, env("b", "x", "3"), 3600e9))
		require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "b"))
		got, err := runtime.NewInspector(b.engine).States(b.ctx, []string{"a", "b", "empty"})
		require.NoError(t, err)
		require.Equal(t, map[string]runtime.QueueState{
			"a":     {Sizes: runtime.Sizes{Ready: 2}},
			"b":     {Sizes: runtime.Sizes{Delayed: 1}, Paused: true},
			"empty": {},
		}, got)
	})
}

// TestEventsAndManyGoThroughDispatchMiddleware: Fire and DispatchMany
// push through the dispatch middleware too, once per call, so a trace
// context reaches every listener's and every bulk job's handler.
func TestEventsAndManyGoThroughDispatchMiddleware(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		var kinds []runtime.DispatchKind
		b.engine.UseDispatch(func(ctx context.Context, out *runtime.DispatchCall, next func(context.Context) error) error {
			mu.Lock()
			kinds = append(kinds, out.Kind)
			mu.Unlock()
			for _, j := range out.Jobs {
				j.Envelope.Headers = map[string]string{"pushed-by": out.Kind.String()}
			}
			return next(ctx)
		})
		rec := &recorder{}
		seen := func(ctx context.Context) {
			info, _ := runtime.JobInfoFrom(ctx)
			rec.add(ctx, info.Name+" "+info.Headers["pushed-by"])
		}
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { seen(ctx); return nil })
		runtime.RegisterListener[emailNotice](b.router, func(ctx context.Context, e orderShipped) error { seen(ctx); return nil })
		runtime.RegisterListener[smsNotice](b.router, func(ctx context.Context, e orderShipped) error { seen(ctx); return nil })

		e := orderShipped{OrderID: "o-1"}
		require.NoError(t, runtime.Fire(b.ctx, e, runtime.QueuedListener[emailNotice](e), runtime.QueuedListener[smsNotice](e)))
		_, err := runtime.DispatchMany(b.ctx, []testJob{job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{})})
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"default", "mail"}, StopWhenEmpty: true})

		require.ElementsMatch(t, []string{
			"test.EmailNotice event", "test.SmsNotice event", "test.Job many", "test.Job many",
		}, rec.list())
		require.Equal(t, []runtime.DispatchKind{runtime.DispatchKindEvent, runtime.DispatchKindMany}, kinds)
	})
}
