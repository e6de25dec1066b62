package console_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// --max-wait alerts on a queue whose oldest ready job has waited longer
// than its threshold, for every queue or per queue, and on a queue it
// names that does not exist; a held queue has a line saying for how
// long.
func TestMonitorMaxWait(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		body, err := runtime.Encode(greet{"old"})
		require.NoError(t, err)
		ten := time.Now().Add(-10 * time.Minute).UnixMilli()
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: &runtime.Envelope{
			ID: "old-job", Queue: "slow", Name: "test.Greet", Body: body, DispatchedAt: ten}}}))
		b.push(t, "fast", greet{"new"})

		code, out, stderr := b.run(t, "queue:monitor", "--max-wait", "1m")
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "Queue slow: the oldest ready job has waited 10m")
		require.Contains(t, out, "more than --max-wait 1m0s: ALERT.")
		require.Regexp(t, `Queue fast: the oldest ready job has waited [0-9.]+m?s \(--max-wait 1m0s\)\.`, out)
		require.Contains(t, stderr, "slow (oldest ready job waited 10m")
		require.NotContains(t, stderr, "fast")

		// A queue's own threshold overrides the one for every queue.
		out = b.ok(t, "queue:monitor", "--max-wait", "1m,slow=1h")
		require.Contains(t, out, "Queue slow: the oldest ready job has waited 10m")

		code, out, stderr = b.run(t, "queue:monitor", "--max-wait", "slwo=1m")
		require.Equal(t, 1, code, out)
		require.Contains(t, stderr, "slwo (named in --max-wait, but no such queue: check its name)")

		// Under a prefix nothing was dispatched to, too.
		code, _, stderr = b.runRaw(t, "queue:monitor", "--max-wait", "slwo=1m", "--redis", b.url, "--prefix", b.prefix+"-empty")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "slwo (named in --max-wait, but no such queue: check its name)")

		code, _, stderr = b.run(t, "queue:monitor", "--max-wait", "slow=-1m")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `"slow=-1m": the wait must be positive`)

		_, err = runtime.NewInspector(b.engine).HoldQueue(b.ctx, "slow", time.Hour)
		require.NoError(t, err)
		out = b.ok(t, "queue:monitor")
		require.Regexp(t, `Queue slow: held for (59m5\d|1h0m0)s more \(runtime.HoldQueue\): no worker takes its jobs until then\.`, out)
		require.NotContains(t, out, "Queue fast: held")
	})
}
