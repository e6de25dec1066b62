package faults_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultrelay"
	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded"
)

func TestMain(m *testing.M) {
	if faultworker.Child() {
		os.Exit(faultworker.Main())
	}
	if faultrelay.Child() {
		os.Exit(faultrelay.Main())
	}
	os.Exit(m.Run())
}

// queue is the queue every test uses; each test has its own Redis.
const queue = "faults"

// bundle is what a fault test needs: its own Redis, an engine on it and
// a dispatcher that remembers acknowledged pushes.
type bundle struct {
	ctx    context.Context
	redis  *harness.Server
	engine *runtime.Engine
	disp   *harness.Dispatcher
}

// setup starts a redis-server of the test's own, with args.
func setup(t *testing.T, args ...string) bundle {
	t.Helper()
	srv := harness.StartRedis(t, args...)
	return setupOn(t, srv, srv.URL())
}

// setupOn opens an engine on url, which reaches srv.
func setupOn(t *testing.T, srv *harness.Server, url string) bundle {
	t.Helper()
	ctx := context.Background()
	// The test's own engine, which checks what the workers did, accepts
	// any eviction policy: the tests of the policy are the workers'.
	e, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: "faults", FailedMaxCount: -1, AllowEviction: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return bundle{ctx: ctx, redis: srv, engine: e, disp: harness.NewDispatcher(t, e, queue)}
}

// workerConfig is the base configuration of the test's workers.
func (b bundle) workerConfig(url string) faultworker.Config {
	return faultworker.Config{
		URL: url, Prefix: "faults", Queues: []string{queue},
		Concurrency: 8, Tries: 20,
		RetryAfter: 2 * time.Second, Timeout: 1500 * time.Millisecond,
		Grace: 10 * time.Second, Sleep: 250 * time.Millisecond,
	}
}

// fleet returns a fleet of workers on the test's Redis, with cfg
// adjusting the base configuration.
func (b bundle) fleet(t *testing.T, cfg func(*faultworker.Config)) *harness.Fleet {
	c := b.workerConfig(b.redis.URL())
	if cfg != nil {
		cfg(&c)
	}
	return harness.NewFleet(t, c)
}

// check runs the checker on the fleet's ledgers, logs the outcome and
// fails the test on anything lost, misplaced or inconsistent.
func (b bundle) check(t *testing.T, f *harness.Fleet) harness.Outcome {
	t.Helper()
	o, err := harness.Check(b.ctx, b.engine, queue, b.disp.Acked(), f.Records())
	require.NoError(t, err)
	t.Logf("outcome: %v", o)
	harness.RequireClean(t, o)
	if t.Failed() {
		t.Logf("worker errors: %v", head(f.LogLines(`"level":"ERROR"`), 10))
	}
	return o
}

func head[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

func isLeaseLost(err error) bool { return errors.Is(err, runtime.ErrLeaseLost) }
