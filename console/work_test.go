package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestWork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "high", greet{"ada"}, greet{"grace"})
		b.push(t, "low", greet{"alan"}, boom{7})

		// One at a time: with more, --stop-when-empty may stop between the
		// retried job's release and its next reserve.
		code, stdout, stderr := b.run(t, "queue:work", "--queue", "high,low", "--stop-when-empty",
			"--backoff", "0", "--concurrency", "1", "--name", "w1", "--timeout", "5", "--retry-after", "10s")
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		require.Equal(t, "Worker w1 processing queues high, low. Stop it with Ctrl-C or SIGTERM.", lines[0])
		require.Equal(t, "Worker w1 stopped (empty): 3 done, 1 released for retry, 1 failed.", lines[len(lines)-1])
		var statuses []string
		for _, l := range lines[1 : len(lines)-1] {
			f := strings.Fields(l) // date time status queue name id detail...
			if f[2] == "INFO" {
				require.Contains(t, l, "INFO     worker stopped worker=w1 reason=empty")
				continue
			}
			statuses = append(statuses, f[2]+" "+f[3]+" "+f[4])
		}
		require.ElementsMatch(t, []string{
			"DONE high test.Greet", "DONE high test.Greet", "DONE low test.Greet",
			"RETRY low test.Boom", "FAILED low test.Boom",
		}, statuses)
		require.Contains(t, stdout, "attempt 1; again in 0s: boom 7")
		require.Contains(t, stdout, "attempt 2: job failed after 2 of 2 tries: boom 7")
		require.Empty(t, stderr, "the worker's log is the lines on Stdout, each told once")

		require.Equal(t, int64(1), b.sizes(t, "low").Failed)
		require.Zero(t, b.sizes(t, "low").Total())
		require.Zero(t, b.sizes(t, "high").Total())
	})
}

// TestWorkLogsJSON: with --log-format json, Stdout is one JSON object a
// line, and a job's failure is one of them, at ERROR, with the job's
// attributes; the jobs that went well are at DEBUG.
func TestWorkLogsJSON(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "default", greet{"ada"}, boom{7})
		code, stdout, stderr := b.run(t, "queue:work", "--stop-when-empty", "--concurrency", "1", "--name", "w1", "--log-format", "json")
		require.Equal(t, 0, code, stderr)
		require.Empty(t, stderr)
		var outcomes []string
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &rec), l)
			if o, ok := rec["outcome"]; ok {
				require.Equal(t, "w1", rec["worker"])
				require.Equal(t, "default", rec["queue"])
				require.NotEmpty(t, rec["id"])
				outcomes = append(outcomes, fmt.Sprintf("%s %s %s attempt %v", rec["level"], rec["job"], o, rec["attempt"]))
			}
		}
		require.ElementsMatch(t, []string{"DEBUG test.Greet ok attempt 1", "WARN test.Boom error attempt 1", "ERROR test.Boom failed attempt 2"}, outcomes)
	})
}

func TestWorkStopsOnLimits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "default", greet{"a"}, greet{"b"}, greet{"c"})

		code, stdout, stderr := b.run(t, "queue:work", "--once", "--quiet")
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		require.Len(t, lines, 3, "--quiet: no line per job")
		require.Equal(t, "Worker processing queues default. Stop it with Ctrl-C or SIGTERM.", lines[0])
		require.Contains(t, lines[1], " INFO     worker stopped worker=worker reason=once processed=1")
		require.Equal(t, "Worker stopped (once): 1 done, 0 released for retry, 0 failed.", lines[2])

		code, stdout, stderr = b.run(t, "queue:work", "--max-jobs", "1", "--quiet", "--concurrency", "1")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "stopped (max jobs): 1 done")

		code, stdout, stderr = b.run(t, "queue:work", "--max-time", "0.3", "--quiet", "--queue", "empty")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "stopped (max time)")
		require.Equal(t, int64(1), b.sizes(t, "default").Ready)
	})
}

func TestWorkRejectsBadConfig(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	code, _, stderr := b.run(t, "queue:work", "--timeout", "2m", "--retry-after", "1m")
	require.Equal(t, 1, code)
	require.Equal(t, "app queue:work: invalid input: WorkerConfig.Timeout (2m0s) must be shorter than RetryAfter (1m0s), or a job could run twice at once",
		oneLine(t, stderr))
}

// queue:work refuses a router that lacks a callback the program defines,
// naming it and where it is defined.
func TestWorkRefusesARouterMissingACallback(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.router = runtime.NewRouter()
		runtime.Register(b.router, "test.Greet", func(ctx context.Context, j greet) error { return nil })
		code, _, stderr := b.run(t, "queue:work", "--once")
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "test.orderFailed (main_test.go:")
		require.Contains(t, stderr, "runtime.RegisterCallback")
	})
}
