package console_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// queue:monitor shows what trimming dropped from a failed store, and
// --failed-trimmed-within exits 1 after a recent trim.
func TestMonitorShowsFailedTrimmed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.failed(t, "billing", 1)
		out := b.ok(t, "queue:monitor", "--failed-trimmed-within", "1h")
		require.NotContains(t, out, "trimmed", "nothing trimmed: no line")

		// An engine whose failed store keeps one job per queue.
		cfg := b.engine.Config()
		cfg.FailedMaxCount = 1
		bounded, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
		require.NoError(t, err)
		for _, id := range []string{"a", "b"} {
			require.NoError(t, bounded.Push(b.ctx, &runtime.Envelope{ID: id, Name: "test.Boom", Queue: "billing", Body: []byte{0x80}}))
			res, err := runtime.NewBroker(bounded).Reserve(b.ctx, "billing", 1, time.Minute)
			require.NoError(t, err)
			j := res.Jobs[0]
			require.NoError(t, runtime.NewBroker(bounded).Fail(b.ctx, runtime.Failure{Ref: j.Ref, Name: "test.Boom", Err: errors.New("declined"), Attempts: 1}))
		}

		out = b.ok(t, "queue:monitor")
		require.Regexp(t, `\nQueue billing: 2 failed jobs trimmed in all \(FailedMaxCount, FailedMaxAge\); the last 1 at [0-9-]+ [0-9:]+, \d+s ago\.\n`, out)
		code, _, stderr := b.run(t, "queue:monitor", "--failed-trimmed-within", "1h")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "billing (1 failed job trimmed")
		require.Contains(t, stderr, "within 1h0m0s)")
	})
}
