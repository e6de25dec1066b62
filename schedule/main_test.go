package schedule_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// testJob is a job a schedule dispatches.
type testJob struct {
	N    int
	opts runtime.JobOptions
}

func (testJob) JobName() string                  { return "test.Job" }
func (j testJob) JobOptions() runtime.JobOptions { return j.opts }
func (j testJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }

func job(n int, opts runtime.JobOptions) testJob { return testJob{N: n, opts: opts} }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// bundle is what a test needs: an engine on a backend under a prefix of
// the test's own.
type bundle struct {
	ctx    context.Context
	engine *runtime.Engine
	rdb    redis.UniversalClient
	prefix string
}

func setup(t *testing.T, be redistest.Backend, cfg runtime.EngineConfig) bundle {
	t.Helper()
	ctx := context.Background()
	cfg.Prefix = redistest.Prefix(t)
	e, err := runtime.Open(ctx, be.URL, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return bundle{ctx: ctx, engine: e, rdb: e.Client(), prefix: cfg.Prefix}
}

func sizes(t *testing.T, b bundle, queue string) runtime.Sizes {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	return s
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, msg)
}
