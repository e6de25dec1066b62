package runtime_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChildWorker())
	}
	if os.Getenv(completeEnv) != "" {
		os.Exit(runCompleteChild()) // complete_tx_test.go
	}
	if u := os.Getenv(openChildEnv); u != "" {
		os.Exit(runChildOpen(u)) // connect_log_test.go
	}
	redistest.Main(m)
}

// bundle is what an engine test needs.
type bundle struct {
	ctx     context.Context
	backend string
	engine  *runtime.Engine
	rdb     redis.UniversalClient
	prefix  string
}

// forEachBackend runs fn against a real Redis and an embedded one, with a
// fresh prefix each.
func forEachBackend(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b bundle)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, be, cfg))
		})
	}
}

func setup(t *testing.T, be redistest.Backend, cfg runtime.EngineConfig) bundle {
	t.Helper()
	ctx := context.Background()
	cfg.Prefix = redistest.Prefix(t)
	e, err := runtime.Open(ctx, be.URL, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return bundle{ctx: ctx, backend: be.Name, engine: e, rdb: e.Client(), prefix: cfg.Prefix}
}

// env returns a small envelope for queue.
func env(queue, name string, body string) *runtime.Envelope {
	return &runtime.Envelope{Name: name, Queue: queue, Body: []byte(body)}
}

func mustReserve(t *testing.T, b bundle, queue string, n int) runtime.ReserveResult {
	t.Helper()
	batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, n, time.Minute)
	require.NoError(t, err)
	return batch
}

func sizes(t *testing.T, b bundle, queue string) runtime.Sizes {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	return s
}

func mustMsgpack(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}
