package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// TestEmbeddedExpiresKeys: key lifetimes on embedded:// run on the wall
// clock, as on Redis, so unique locks and chain markers expire there too.
func TestEmbeddedExpiresKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := runtime.Open(ctx, "embedded://"+redistest.Prefix(t), runtime.EngineConfig{})
	require.NoError(t, err)
	defer e.Close()
	rdb := e.Client()
	require.NoError(t, rdb.Set(ctx, "short", "1", 100*time.Millisecond).Err())
	require.NoError(t, rdb.Set(ctx, "long", "1", time.Hour).Err())
	require.Eventually(t, func() bool {
		return rdb.Exists(ctx, "short").Val() == 0
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int64(1), rdb.Exists(ctx, "long").Val())
}
