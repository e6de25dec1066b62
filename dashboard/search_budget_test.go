package dashboard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// A search across queues of big payloads stops after its budget of
// them (32 MB; 4 MB here, so that a loaded machine reads the first
// queue well within the page's time) and says where, rather than
// running out of time; a search of the queue it stopped before finds
// its jobs.
func TestSearchStopsAfterItsBudget(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Logger: quiet})
	dashboard.SetScanBytes(b.dash, 4<<20)
	pad := strings.Repeat("x", 1<<20-1024)
	for _, q := range []string{"big-a", "big-b"} {
		jobs := make([]costJob, 6)
		for i := range jobs {
			jobs[i] = costJob{Q: q, Text: "big", Pad: pad, Tags: []string{"wanted"}}
		}
		_, err := runtime.DispatchMany(b.ctx, jobs)
		require.NoError(t, err)
	}
	_, body, _ := b.get(t, "search?tag=wanted")
	require.Contains(t, body, `id="search-stopped"`)
	require.Contains(t, body, "before queue <bdi>big-b</bdi>")
	require.Contains(t, body, "?queue=big-a")
	require.NotContains(t, body, "?queue=big-b\"")

	_, body, _ = b.get(t, "search?tag=wanted&queue=big-b")
	require.NotContains(t, body, `id="search-stopped"`)
	require.Contains(t, body, "jobs/")
	require.Contains(t, body, "?queue=big-b\"")

	// The failed list's filter stops the same way.
	r := runtime.NewRouter()
	runtime.Register(r, "cost.Job", func(ctx context.Context, j costJob) error { return errors.New("refused") })
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"big-a", "big-b"}, StopWhenEmpty: true, Tries: 1,
		Sleep: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	_, body, _ = b.get(t, "failed?tag=wanted")
	require.Contains(t, body, `id="failed-stopped"`)
	require.Contains(t, body, "before queue <bdi>big-b</bdi>")
	_, body, _ = b.get(t, "failed?tag=wanted&queue=big-b")
	require.NotContains(t, body, `id="failed-stopped"`)
	require.Contains(t, body, "?queue=big-b\"")
}
