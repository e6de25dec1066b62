package console_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ids := b.push(t, "mail", greet{}, greet{})
		out := b.ok(t, "queue:cancel", ids[0])
		require.Equal(t, fmt.Sprintf("Cancelled ready job %s of queue mail.\n", ids[0]), out)
		require.Equal(t, int64(1), b.sizes(t, "mail").Failed)
		require.Equal(t, int64(1), b.sizes(t, "mail").Ready)

		code, _, stderr := b.run(t, "queue:cancel", ids[0])
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: job "+ids[0]+" of queue mail is in the failed store already; nothing to cancel", oneLine(t, stderr))

		// A running job, as a worker holds it; a cancel naming an older
		// attempt leaves it alone.
		r, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, r.Jobs, 1)
		code, _, stderr = b.run(t, "queue:cancel", ids[1], "--attempt", "0")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: job "+ids[1]+" of queue mail is at attempt 1 now, not 0: it was reserved again; nothing changed", oneLine(t, stderr))
		out = b.ok(t, "queue:cancel", ids[1], "--queue", "mail")
		require.Equal(t, fmt.Sprintf("Cancelled running job %s of queue mail (attempt 1); its worker stops it at its next heartbeat.\n", ids[1]), out)
		require.ErrorIs(t, runtime.NewBroker(b.engine).Ack(b.ctx, r.Jobs[0].Ref), runtime.ErrLeaseLost)
		require.Equal(t, int64(2), b.sizes(t, "mail").Failed)

		code, _, stderr = b.run(t, "queue:cancel", "nope")
		require.Equal(t, 1, code)
		require.Equal(t, "app queue:cancel: no waiting, delayed or running job with ID nope (it may have finished)", oneLine(t, stderr))
		code, _, stderr = b.run(t, "queue:cancel")
		require.Equal(t, 2, code)
		oneLine(t, stderr)
	})
}
