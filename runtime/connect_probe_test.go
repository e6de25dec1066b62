package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// rediss:// pointed at a server that speaks plain Redis says so, rather
// than waiting out the client's retries to say "context deadline
// exceeded". (The context has no deadline: the error must come from the
// check, not from a deadline.)
func TestOpenTLSOnAPlainRedisSaysSo(t *testing.T) {
	t.Parallel()
	addr := redistest.Addr(t)
	_, err := runtime.Open(context.Background(), "rediss://"+addr, runtime.EngineConfig{})
	require.ErrorIs(t, err, runtime.ErrTLSMismatch)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "jobgen: TLS handshake with a server that speaks plain Redis: the Redis at "+addr+
		" answers without TLS: use redis:// rather than rediss://, or connect to the server's TLS port (tls-port)")
}

// A Redis that is not running is named by its address, in words an
// operator reads, not as a step of the engine's start.
func TestOpenUnreachableRedisNamesItsAddress(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	for _, scheme := range []string{"redis", "rediss"} {
		_, err := runtime.Open(context.Background(), scheme+"://"+addr+"/0?max_retries=-1", runtime.EngineConfig{})
		require.ErrorIs(t, err, runtime.ErrUnreachable, scheme)
		require.ErrorContains(t, err, "jobgen: cannot reach Redis at "+addr+": ", scheme)
		require.ErrorContains(t, err, "connection refused: nothing listens there: start Redis, or fix the URL's host and port", scheme)
		require.NotContains(t, err.Error(), "load script", scheme)
		require.NotContains(t, err.Error(), "start engine", scheme)
	}
}
