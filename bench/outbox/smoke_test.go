package outboxbench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
)

// redisAddrEnv names the Redis the smoke test runs against, as the
// repository's other tests do (internal/redistest).
const redisAddrEnv = "JOBGEN_TEST_REDIS_ADDR"

// redisURL returns the test Redis's URL. Without one the test is skipped
// on a developer's machine, and fails in CI (JOBGEN_CI=1).
func redisURL(t *testing.T) string {
	t.Helper()
	a := os.Getenv(redisAddrEnv)
	if a == "" {
		if os.Getenv("JOBGEN_CI") != "" {
			t.Fatalf("%s is not set; scripts/test starts a Redis", redisAddrEnv)
		}
		t.Skipf("%s is not set", redisAddrEnv)
	}
	return "redis://" + a
}

// TestSmoke runs every system through every phase, in two rounds, with
// 200 jobs, so the benchmark keeps building and running. It checks that each phase ran,
// lost no job and ran none twice; it asserts no figures.
func TestSmoke(t *testing.T) {
	cfg := Config{
		PostgresURL:     pgtest.URL(t),
		RedisURL:        redisURL(t),
		Rounds:          2,
		Producers:       2,
		InsertFor:       200 * time.Millisecond,
		Many:            20,
		Rates:           []int{200},
		LatencyFor:      time.Second,
		Warmup:          100 * time.Millisecond,
		Backlog:         200,
		Concurrency:     10,
		PoolSize:        6,
		ProbeFreshTable: true,
		Timeout:         30 * time.Second,
		Log:             tWriter{t},
	}
	results, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, results, 3) // jobgen, and River with each default cooldown
	for _, r := range results {
		require.Emptyf(t, r.Notes, "%s", r.System)
		require.Positivef(t, r.InsertOne, "%s: insert, 1 a transaction", r.System)
		require.Positivef(t, r.InsertMany, "%s: insert, many a transaction", r.System)
		require.Lenf(t, r.Latency, 1, "%s: latency figures", r.System)
		require.Equalf(t, 200, r.Latency[0].Jobs, "%s: jobs timed in the latency phase", r.System)
		require.Positivef(t, r.Latency[0].P50, "%s: latency", r.System)
		require.Positivef(t, r.Drain, "%s: drain", r.System)
	}
	jg := results[0]
	require.Equal(t, SystemJobgen, jg.System)
	require.Positive(t, jg.Relay)
	require.Positive(t, jg.Worker)
	require.Positive(t, jg.DrainFresh)
	require.Positive(t, jg.DrainFreshIndexed)
	require.NotNil(t, jg.LatencyTrace)
	require.Positive(t, jg.LatencyTrace.Passes)
	require.NotNil(t, jg.RelayTrace)

	var table strings.Builder
	require.NoError(t, WriteTable(&table, cfg, results))
	require.Contains(t, table.String(), "| jobgen/River |")
	t.Logf("\n%s", table.String())
}

// tWriter writes to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
