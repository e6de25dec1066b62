package exampleevents_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/exampleevents"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/jobtest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// handlers implements the generated Handlers; NotifyCarrier always fails.
type handlers struct {
	mu  sync.Mutex
	ran map[string]int
}

func (h *handlers) add(name string, e exampleevents.OrderShipped) {
	h.mu.Lock()
	h.ran[name+" "+e.OrderID]++
	h.mu.Unlock()
}

func (h *handlers) HandleEmailCustomer(ctx context.Context, e exampleevents.OrderShipped) error {
	h.add("email", e)
	return nil
}

func (h *handlers) HandleNotifyCarrier(ctx context.Context, e exampleevents.OrderShipped) error {
	h.add("carrier", e)
	return errors.New("carrier API down")
}

func (h *handlers) HandleUpdateCRM(ctx context.Context, e exampleevents.OrderShipped) error {
	h.add("crm", e)
	return nil
}

func (h *handlers) HandleAuditShipment(ctx context.Context, e exampleevents.OrderShipped) error {
	h.add("audit", e)
	return nil
}

func (h *handlers) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.ran {
		out[k] = v
	}
	return out
}

type bundle struct {
	ctx    context.Context
	engine *runtime.Engine
	router *runtime.Router
	h      *handlers
	prefix string
}

func setup(t *testing.T, be redistest.Backend) bundle {
	t.Helper()
	prefix := redistest.Prefix(t)
	engine, err := runtime.Open(context.Background(), be.URL, runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = engine.Close() })
	h := &handlers{ran: map[string]int{}}
	router := runtime.NewRouter()
	exampleevents.Register(router, h)
	require.NoError(t, router.Err())
	ctx := runtime.WithRouter(runtime.WithDispatcher(context.Background(), engine), router)
	return bundle{ctx: ctx, engine: engine, router: router, h: h, prefix: prefix}
}

// TestFire fires OrderShipped, whose three queued listeners run as jobs
// of their own: the carrier's fails for good after its 3 tries, the
// other two succeed, and the failed store holds exactly the carrier's.
func TestFire(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be)
			require.NoError(t, exampleevents.OrderShipped{OrderID: "o-1"}.Fire(b.ctx))
			require.Equal(t, map[string]int{"audit o-1": 1}, b.h.snapshot(), "the synchronous listener ran inside Fire")

			w, err := runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{
				Queues: []string{"shipping"}, Concurrency: 3, StopWhenEmpty: true, Sleep: 50 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
			defer cancel()
			require.NoError(t, w.Run(ctx))
			require.NoError(t, ctx.Err(), "the worker did not stop by itself")

			require.Equal(t, map[string]int{"audit o-1": 1, "email o-1": 1, "crm o-1": 1, "carrier o-1": 3}, b.h.snapshot())
			failed, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, "shipping", 0, 10)
			require.NoError(t, err)
			require.Len(t, failed, 1)
			require.Equal(t, "exampleevents.NotifyCarrier", failed[0].Name)
			require.Equal(t, 3, failed[0].Attempts)
		})
	}
}

// TestFireAtomic: with the queue's ready list broken, Fire fails and
// queues none of the listeners' jobs.
func TestFireAtomic(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be)
			rdb := b.engine.Client()
			ready := b.prefix + ":{shipping}:ready"
			require.NoError(t, rdb.Set(b.ctx, ready, "not a list", 0).Err())
			require.Error(t, exampleevents.OrderShipped{OrderID: "o-2"}.Fire(b.ctx))
			n, err := rdb.HLen(b.ctx, b.prefix+":{shipping}:payloads").Result()
			require.NoError(t, err)
			require.Zero(t, n, "no listener job was written")
		})
	}
}

// TestFireFake: the fake records the event and its listeners' jobs.
func TestFireFake(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	require.NoError(t, exampleevents.OrderShipped{OrderID: "o-3"}.Fire(fake.Context(context.Background())))
	jobtest.AssertFired(t, fake, func(e exampleevents.OrderShipped) bool { return e.OrderID == "o-3" })
	jobtest.AssertDispatched[runtime.ListenerJob[exampleevents.EmailCustomer, exampleevents.OrderShipped]](t, fake)
	jobtest.AssertDispatchedTimes[runtime.ListenerJob[exampleevents.NotifyCarrier, exampleevents.OrderShipped]](t, fake, 1)
	jobtest.AssertNotDispatched[runtime.ListenerJob[exampleevents.AuditShipment, exampleevents.OrderShipped]](t, fake)
	require.Len(t, fake.Dispatches(), 3)
}
