package console_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// --attempt names an attempt the job has not reached: the command says
// so, not that the job was reserved again; a negative --attempt is
// refused, not taken as no --attempt at all.
func TestCancelAttemptOutOfRange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ids := b.push(t, "mail", greet{})
		r, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, r.Jobs, 1)

		code, _, stderr := b.run(t, "queue:cancel", ids[0], "--attempt", "5")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: job "+ids[0]+" of queue mail is at attempt 1, and has not reached attempt 5: give the attempt count queue:job or the dashboard shows, or leave --attempt out; nothing changed", oneLine(t, stderr))

		code, _, stderr = b.run(t, "queue:cancel", ids[0], "--attempt", "-1")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), "--attempt (-1) must not be negative: give the job's attempt count as queue:job or the dashboard shows it (1 now), or leave --attempt out to cancel the attempt found")
		require.Equal(t, int64(0), b.sizes(t, "mail").Failed, "nothing was cancelled")
		require.Equal(t, int64(1), b.sizes(t, "mail").Reserved)

		out := b.ok(t, "queue:cancel", ids[0], "--attempt", "1")
		require.Contains(t, out, "Cancelled running job "+ids[0])
	})
}
