package dashboard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// A queue a handler holds (runtime.HoldQueue) has a badge with what is
// left of its hold, on the overview and on its page; it goes once the
// hold ends.
func TestQueueHoldBadge(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	_, err := runtime.Dispatch(b.ctx, note{Text: "a"})
	require.NoError(t, err)
	_, body, _ := b.get(t, "queues/notes")
	require.NotContains(t, body, `id="queue-hold"`)

	in := runtime.NewInspector(b.engine)
	_, err = in.HoldQueue(b.ctx, "notes", 90*time.Minute)
	require.NoError(t, err)
	_, body, _ = b.get(t, "queues/notes")
	require.Regexp(t, `<span class="badge warn hold" id="queue-hold" [^>]*>held <time data-left="\d+">1h (29|30)m</time> more</span>`, body)
	_, body, _ = b.get(t, "")
	require.Regexp(t, `<span class="badge warn hold" [^>]*>held <time data-left="\d+">1h (29|30)m</time></span>`, body)

	_, err = in.HoldQueue(b.ctx, "notes", 0)
	require.NoError(t, err)
	_, body, _ = b.get(t, "queues/notes")
	require.NotContains(t, body, `id="queue-hold"`)
}
