package console_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/stretchr/testify/require"
)

func TestFailed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		require.Equal(t, "No failed jobs.\n", b.ok(t, "queue:failed"))

		mail := b.failed(t, "mail", 2)
		time.Sleep(5 * time.Millisecond) // a later failure time
		bill := b.failed(t, "billing", 1)

		out := b.ok(t, "queue:failed")
		rs := rows(out)
		require.Equal(t, []string{"ID", "QUEUE", "JOB", "ATTEMPTS", "FAILED", "AT", "ERROR"}, rs[0])
		require.Len(t, rs, 4)
		// Newest first, across queues.
		require.Equal(t, []string{bill[0], "billing", "test.Boom", "1"}, rs[1][:4])
		require.Equal(t, "boom 0", strings.Join(rs[1][6:], " "))
		require.ElementsMatch(t, mail, []string{rs[2][0], rs[3][0]})

		rs = rows(b.ok(t, "queue:failed", "--queue", "mail"))
		require.Len(t, rs, 3)
		require.Equal(t, "mail", rs[1][1])

		out = b.ok(t, "queue:failed", "--limit", "1")
		require.Len(t, rows(out), 3) // header, one job, footer
		require.Contains(t, out, bill[0])
		require.Contains(t, out, "Showing 1 of 3 failed jobs; --limit shows more.\n")

		code, _, stderr := b.run(t, "queue:failed", "--limit", "0")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), "--limit (0) must be at least 1")
		code, _, stderr = b.run(t, "queue:failed", "--queue", "a{b}")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), `invalid value "a{b}" for flag --queue: queue name "a{b}" contains "{", which would break its cluster hash tag`)
	})
}

func TestRetry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		mail := b.failed(t, "mail", 3)
		bill := b.failed(t, "billing", 2)

		// By ID, across queues; an unknown ID is an error after the rest
		// are retried.
		code, stdout, stderr := b.run(t, "queue:retry", mail[0], bill[1], "NOPE")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:retry: no failed job with ID NOPE", oneLine(t, stderr))
		require.Contains(t, stdout, fmt.Sprintf("Retried %s on queue mail.\n", mail[0]))
		require.Contains(t, stdout, fmt.Sprintf("Retried %s on queue billing.\n", bill[1]))
		require.Equal(t, int64(1), b.sizes(t, "mail").Ready)
		require.Equal(t, int64(2), b.sizes(t, "mail").Failed)

		// --queue with no IDs: all of that queue.
		require.Equal(t, "Retried 1 failed job (billing 1).\n", b.ok(t, "queue:retry", "--queue", "billing"))
		require.Equal(t, int64(2), b.sizes(t, "billing").Ready)

		// An ID in another queue than --queue is not found.
		code, _, stderr = b.run(t, "queue:retry", mail[1], "--queue", "billing")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "no failed job with ID "+mail[1])

		require.Equal(t, "Retried 2 failed jobs (mail 2).\n", b.ok(t, "queue:retry", "all"))
		require.Equal(t, int64(3), b.sizes(t, "mail").Ready)
		require.Equal(t, "No failed jobs to retry.\n", b.ok(t, "queue:retry", "all"))

		for _, args := range [][]string{{"queue:retry"}, {"queue:retry", "all", mail[0]}} {
			code, _, stderr = b.run(t, args...)
			require.Equal(t, 2, code, args)
			oneLine(t, stderr)
		}
	})
}

// Retrying many jobs goes oldest first, a chunk at a time, with progress.
func TestRetryAllShowsProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.failed(t, "bulk", 2500)
		b.failed(t, "other", 1)
		oldest, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, "bulk", 2499, 1)
		require.NoError(t, err)

		code, stdout, stderr := b.run(t, "queue:retry", "all")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "Retried 2501 failed jobs (bulk 2500, other 1).\n", stdout)
		require.Equal(t, "retrying: 1000 of 2501 failed jobs (39%)\n"+
			"retrying: 2000 of 2501 failed jobs (79%)\n"+
			"retrying: 2500 of 2501 failed jobs (99%)\n"+
			"retrying: 2501 of 2501 failed jobs (100%)\n", stderr)
		require.Equal(t, int64(2500), b.sizes(t, "bulk").Ready)

		// Oldest first: the first job reserved is the oldest failure.
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "bulk", 1, time.Minute)
		require.NoError(t, err)
		require.Equal(t, oldest[0].ID, batch.Jobs[0].ID)
	})
}

func TestForget(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		mail := b.failed(t, "mail", 2)
		bill := b.failed(t, "billing", 1)

		out := b.ok(t, "queue:forget", mail[0], bill[0])
		require.Equal(t, fmt.Sprintf("Deleted failed job %s of queue mail.\nDeleted failed job %s of queue billing.\n", mail[0], bill[0]), out)
		require.Equal(t, int64(1), b.sizes(t, "mail").Failed)
		require.Zero(t, b.sizes(t, "mail").Ready)

		code, _, stderr := b.run(t, "queue:forget", mail[1], "--queue", "billing")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:forget: no failed job with ID "+mail[1], oneLine(t, stderr))

		code, _, stderr = b.run(t, "queue:forget", "A", "B")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:forget: no failed jobs with IDs A, B", oneLine(t, stderr))

		code, _, stderr = b.run(t, "queue:forget")
		require.Equal(t, 2, code)
		oneLine(t, stderr)
	})
}

func TestFlush(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.failed(t, "mail", 2)
		b.failed(t, "billing", 1)

		require.Equal(t, "Deleted 1 failed job.\n", b.ok(t, "queue:flush", "--queue", "billing"))
		require.Zero(t, b.sizes(t, "billing").Failed)
		require.Equal(t, int64(2), b.sizes(t, "mail").Failed)

		b.failed(t, "bulk", 2100)
		code, stdout, stderr := b.run(t, "queue:flush")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "Deleted 2102 failed jobs.\n", stdout)
		require.Equal(t, "deleting: 1000 of 2102 failed jobs (47%)\n"+
			"deleting: 2000 of 2102 failed jobs (95%)\n"+
			"deleting: 2100 of 2102 failed jobs (99%)\n"+
			"deleting: 2102 of 2102 failed jobs (100%)\n", stderr)
		for _, q := range []string{"mail", "bulk"} {
			require.Zero(t, b.sizes(t, q).Failed)
		}
	})
}

func TestPruneFailed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.failed(t, "mail", 2)
		b.failed(t, "billing", 1)

		code, stdout, stderr := b.run(t, "queue:prune-failed")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "Deleted 0 failed jobs older than 24 hours.\n", stdout)
		require.Equal(t, "pruning: 1 of 2 queues (50%)\npruning: 2 of 2 queues (100%)\n", stderr)
		require.Equal(t, int64(2), b.sizes(t, "mail").Failed)

		time.Sleep(5 * time.Millisecond)
		code, stdout, stderr = b.run(t, "queue:prune-failed", "--hours", "0", "--queue", "mail")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "Deleted 2 failed jobs older than 0 hours.\n", stdout)
		require.Empty(t, stderr) // one queue: no progress
		require.Zero(t, b.sizes(t, "mail").Failed)
		require.Equal(t, int64(1), b.sizes(t, "billing").Failed)

		code, _, stderr = b.run(t, "queue:prune-failed", "--hours", "-1")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), "--hours (-1) must not be negative")
	})
}
