package runtime_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// lockedBuffer is a bytes.Buffer a logger may write from several
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// What the engine logs by itself, here a trim of the failed store, goes
// to EngineConfig.Logger, not to the process's default logger.
func TestEngineLogsToItsLogger(t *testing.T) {
	var out lockedBuffer
	logger := slog.New(slog.NewTextHandler(&out, nil))
	var backends atomic.Int32
	// The backends' subtests run in parallel, after this function
	// returns, and share the logger: their lines are counted once all
	// have run, one trim each.
	t.Cleanup(func() {
		require.Equal(t, int(backends.Load()), strings.Count(out.String(), "failed store trimmed: failed jobs dropped"), out.String())
	})
	forEachBackend(t, runtime.EngineConfig{FailedMaxCount: 1, Logger: logger}, func(t *testing.T, b bundle) {
		backends.Add(1)
		failInOrder(t, b, "billing", 2)
		require.Contains(t, out.String(), "queue=billing")
	})
}
