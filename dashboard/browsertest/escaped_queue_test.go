package browsertest

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// hostileQueue needs escaping in a path and in a query, and holds what a
// second escape or unescape would change (%41, +).
const hostileQueue = "in:v é/x y?a&b=1+2%41;"

// placed is a job whose queue is given; no worker serves its queues.
type placed struct {
	Q    string
	Tags []string
}

func (placed) JobName() string { return "test.Placed" }
func (p placed) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: p.Q, Tags: p.Tags}
}
func (p placed) EncodeJob() ([]byte, error) { return runtime.Encode(p) }

// A job of a queue whose name needs escaping is cancelled from its page:
// from the overview to the queue, to the job, to the confirmation, which
// names the queue, and the job goes to the failed store cancelled.
func TestCancelInAQueueWhoseNameNeedsEscaping(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	watchDialogs(t, ctx)
	id, err := runtime.Dispatch(a.ctx, placed{Q: hostileQueue})
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url)))
	until(t, ctx, `!!document.querySelector('a[href="./queues/`+url.PathEscape(hostileQueue)+`"]')`)
	follow(t, ctx, `a[href="./queues/`+url.PathEscape(hostileQueue)+`"]`)
	until(t, ctx, `!!document.querySelector("a[href*='jobs/`+id+`']")`)
	follow(t, ctx, `a[href*='jobs/`+id+`']`)
	until(t, ctx, `!!document.getElementById("cancel-job")`)
	follow(t, ctx, "#cancel-job")
	until(t, ctx, `!!document.getElementById("confirm")`)
	h1, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".confirm h1").textContent`))
	require.NoError(t, err)
	require.Contains(t, h1, "of queue "+hostileQueue+"?", "the confirmation names the queue")
	follow(t, ctx, "#confirm")
	until(t, ctx, `!!document.getElementById("job-cancelled")`)
	until(t, ctx, textIs("job-state", "failed"))
	f, ok, err := runtime.NewInspector(a.engine).Failed().Get(a.ctx, hostileQueue, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, f.Cancelled)
}
