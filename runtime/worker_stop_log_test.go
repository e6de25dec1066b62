package runtime_test

import (
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// childLogWriter copies the child worker's log lines to a Redis list,
// prefix:childstderr, for the tests to read.
func childLogWriter(ctx context.Context, e *runtime.Engine, prefix string) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
			e.Client().RPush(ctx, prefix+":childstderr", line)
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A worker says, as SIGTERM arrives, what it will do: take no new job,
// let its running job finish within the grace period. It says so while
// the job still runs (here for a minute, with a grace of a minute),
// not only once it has stopped.
func TestSigtermIsLoggedOnReceipt(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		c := startChild(t, b, time.Minute)
		dispatchChild(t, b, 120_000)
		c.waitLog(t, "start")
		c.signal(t, syscall.SIGTERM)
		var line string
		eventually(t, func() bool {
			lines, err := b.rdb.LRange(b.ctx, b.prefix+":childstderr", 0, -1).Result()
			require.NoError(t, err)
			for _, l := range lines {
				if strings.Contains(l, "stop signal received") {
					line = l
					return true
				}
			}
			return false
		}, "the worker logs the SIGTERM as it arrives")
		require.Contains(t, line, "taking no new jobs; running jobs may finish within the grace period, then those still running go back to their queues")
		require.Contains(t, line, "signal=SIGTERM")
		require.Contains(t, line, "running=1")
		require.Contains(t, line, "grace=1m0s")
		require.Equal(t, []string{"ready", "start"}, c.log(t), "the job still runs")
	})
}
