package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// An event and its listeners, written as jobgen generates them.

type orderShipped struct{ OrderID string }

type emailNotice struct{}

func (emailNotice) ListenerName() string { return "test.EmailNotice" }
func (emailNotice) ListenerOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "mail", Tries: 2}
}

type smsNotice struct{}

func (smsNotice) ListenerName() string { return "test.SmsNotice" }
func (smsNotice) ListenerOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "mail", Tries: 3}
}

type crmUpdate struct{}

func (crmUpdate) ListenerName() string { return "test.CrmUpdate" }
func (crmUpdate) ListenerOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "mail", Tries: 1}
}

type auditLog struct{}

func (auditLog) ListenerName() string                { return "test.AuditLog" }
func (auditLog) ListenerOptions() runtime.JobOptions { return runtime.JobOptions{} }

type elsewhere struct{}

func (elsewhere) ListenerName() string                { return "test.Elsewhere" }
func (elsewhere) ListenerOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "other"} }

func (e orderShipped) fire(ctx context.Context) error {
	return runtime.Fire(ctx, e,
		runtime.SyncListener[auditLog](e),
		runtime.QueuedListener[emailNotice](e),
		runtime.QueuedListener[smsNotice](e),
		runtime.QueuedListener[crmUpdate](e),
	)
}

// TestFireQueuesEachListenerAsItsOwnJob fires an event with three queued
// listeners, one of which fails every attempt: the other two succeed,
// the failing one retries on its own tries and leaves exactly one entry
// in the failed store; the synchronous listener ran inside Fire.
func TestFireQueuesEachListenerAsItsOwnJob(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var mu sync.Mutex
		ran := map[string]int{}
		record := func(name string, err error) func(context.Context, orderShipped) error {
			return func(ctx context.Context, e orderShipped) error {
				require.Equal(t, "o-1", e.OrderID)
				mu.Lock()
				ran[name]++
				mu.Unlock()
				return err
			}
		}
		runtime.RegisterListener[auditLog](b.router, record("audit", nil))
		runtime.RegisterListener[emailNotice](b.router, record("email", nil))
		runtime.RegisterListener[smsNotice](b.router, record("sms", errors.New("sms gateway down")))
		runtime.RegisterListener[crmUpdate](b.router, record("crm", nil))

		ctx := runtime.WithRouter(b.ctx, b.router)
		require.NoError(t, orderShipped{OrderID: "o-1"}.fire(ctx))
		mu.Lock()
		require.Equal(t, map[string]int{"audit": 1}, ran, "only the synchronous listener ran inside Fire")
		mu.Unlock()
		sizes, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "mail")
		require.NoError(t, err)
		require.EqualValues(t, 3, sizes.Ready)

		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"mail"}, StopWhenEmpty: true, Concurrency: 3})
		require.Equal(t, map[string]int{"audit": 1, "email": 1, "sms": 3, "crm": 1}, ran)
		failed := b.failed(t, "mail")
		require.Len(t, failed, 1)
		require.Equal(t, "test.SmsNotice", failed[0].Name)
		require.Equal(t, 3, failed[0].Attempts)
		require.Contains(t, failed[0].Error, "sms gateway down")
	})
}

// TestFireQueuesNoneOnRedisError fires an event whose queue's ready list
// is of the wrong type: the push call fails, and none of the listeners'
// jobs is queued.
func TestFireQueuesNoneOnRedisError(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.RegisterListener[auditLog](b.router, func(context.Context, orderShipped) error { return nil })
		ctx := runtime.WithRouter(b.ctx, b.router)
		ready := b.prefix + ":{mail}:ready"
		require.NoError(t, b.rdb.Set(b.ctx, ready, "not a list", 0).Err())

		err := orderShipped{OrderID: "o-2"}.fire(ctx)
		require.Error(t, err)
		require.ErrorContains(t, err, ready)
		n, err := b.rdb.HLen(b.ctx, b.prefix+":{mail}:payloads").Result()
		require.NoError(t, err)
		require.Zero(t, n, "no payload written")

		require.NoError(t, b.rdb.Del(b.ctx, ready).Err())
		require.NoError(t, orderShipped{OrderID: "o-3"}.fire(ctx))
		sizes, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "mail")
		require.NoError(t, err)
		require.EqualValues(t, 3, sizes.Ready, "the next fire queues all three")
	})
}

// TestFireChecks: listeners on different queues, a synchronous listener
// that fails, and a fire with synchronous listeners only and no
// dispatcher.
func TestFireChecks(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		e := orderShipped{OrderID: "o-4"}
		err := runtime.Fire(b.ctx, e, runtime.QueuedListener[emailNotice](e), runtime.QueuedListener[elsewhere](e))
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "test.Elsewhere")

		r := runtime.NewRouter()
		runtime.RegisterListener[auditLog](r, func(context.Context, orderShipped) error { return errors.New("audit down") })
		ctx := runtime.WithRouter(b.ctx, r)
		err = runtime.Fire(ctx, e, runtime.SyncListener[auditLog](e), runtime.QueuedListener[emailNotice](e))
		require.ErrorContains(t, err, "audit down")
		sizes, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "mail")
		require.NoError(t, err)
		require.Zero(t, sizes.Total(), "a failed synchronous listener stops Fire before anything is queued")

		// No dispatcher at all: synchronous listeners still run.
		err = runtime.Fire(runtime.WithRouter(context.Background(), r), e, runtime.SyncListener[auditLog](e))
		require.ErrorContains(t, err, "audit down")
	})
}
