package runtime_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestEvictingRedisIsRefused: on a Redis of its own whose
// maxmemory-policy may evict keys, Open refuses, saying why and how to
// accept the risk; with AllowEviction it opens, and a worker warns once.
// A worker whose Redis turns to such a policy after its engine opened
// refuses to start.
func TestEvictingRedisIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = rdb.Close() }()
	url := "redis://" + srv.Addr + "/0"
	prefix := redistest.Prefix(t)

	e, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err, "noeviction, the default, is safe")
	defer e.Close()

	for _, policy := range []string{"allkeys-lru", "volatile-ttl"} {
		require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", policy).Err())
		_, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
		require.ErrorIs(t, err, runtime.ErrEvicting, policy)
		for _, says := range []string{policy, srv.Addr, "noeviction", "AllowEviction", "--allow-eviction"} {
			require.ErrorContains(t, err, says)
		}

		w, err := runtime.NewWorker(e, runtime.NewRouter(), runtime.WorkerConfig{Once: true, Sleep: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
		require.NoError(t, err)
		require.ErrorIs(t, w.Run(ctx), runtime.ErrEvicting, "a worker checks at its start, %s", policy)
	}

	allowed, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix, AllowEviction: true})
	require.NoError(t, err)
	defer allowed.Close()
	var logs bytes.Buffer
	w, err := runtime.NewWorker(allowed, runtime.NewRouter(), runtime.WorkerConfig{Once: true, Sleep: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN msg=\"Redis may evict keys"), logs.String())
	require.Contains(t, logs.String(), "maxmemory-policy=volatile-ttl")
}
