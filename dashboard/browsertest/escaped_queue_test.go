package browsertest

import (
	"fmt"
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

// Every action on a queue whose name needs escaping works in a browser:
// a job is cancelled from its page (from the overview to the queue, to
// the job, to the confirmation, which names the queue); the queue is
// paused, resumed, limited and cleared from its page; its failed jobs
// are flushed.
func TestActionsInAQueueWhoseNameNeedsEscaping(t *testing.T) {
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
	ins := runtime.NewInspector(a.engine)
	f, ok, err := ins.Failed().Get(a.ctx, hostileQueue, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, f.Cancelled)

	// The queue page's actions: pause, resume, limits, clear.
	_, err = runtime.Dispatch(a.ctx, placed{Q: hostileQueue})
	require.NoError(t, err)
	follow(t, ctx, `#job a[href^="../queues/"]`)
	until(t, ctx, `!!document.getElementById("pause")`)
	follow(t, ctx, "#pause")
	until(t, ctx, textIs("queue-state", "paused"))
	paused, err := ins.QueuePaused(a.ctx, hostileQueue)
	require.NoError(t, err)
	require.True(t, paused)
	follow(t, ctx, "#resume")
	until(t, ctx, textIs("queue-state", "running"))
	_, err = chromedp.Run(ctx, chromedp.SetValue(chromedp.CSS(`input[name="limit"]`), "3"))
	require.NoError(t, err)
	follow(t, ctx, "#set-limits")
	until(t, ctx, textIs("limits-limit", "3"))
	limits, err := ins.QueueLimits(a.ctx, hostileQueue)
	require.NoError(t, err)
	require.Equal(t, 3, limits.Concurrency)
	follow(t, ctx, `a.button.danger[href$="/clear"]`)
	until(t, ctx, `!!document.getElementById("confirm")`)
	h1, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".confirm h1").textContent`))
	require.NoError(t, err)
	require.Contains(t, h1, "queue "+hostileQueue+"?")
	follow(t, ctx, "#confirm")
	until(t, ctx, `!!document.getElementById("queue-state")`)
	s, err := ins.Sizes(a.ctx, hostileQueue)
	require.NoError(t, err)
	require.Zero(t, s.Ready, "cleared")

	// The failed page's actions: flush.
	follow(t, ctx, `#tabs a[href*="failed?queue="]`)
	until(t, ctx, `!!document.querySelector('a.button.danger[href*="failed/flush"]')`)
	follow(t, ctx, `a.button.danger[href*="failed/flush"]`)
	until(t, ctx, `!!document.getElementById("confirm")`)
	follow(t, ctx, "#confirm")
	until(t, ctx, `!!document.getElementById("failed-count")`)
	n, err := ins.Failed().Count(a.ctx, hostileQueue)
	require.NoError(t, err)
	require.Zero(t, n, "flushed")
}

// A right-to-left override in a queue's name shows as ⟨U+202E⟩ on its
// page and in the clear confirmation, at 390 and 1280 px.
func TestRightToLeftOverrideShowsInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	shot := newShots(t)
	const spoof = "invoices\u202efdp.exe"
	_, err := runtime.Dispatch(a.ctx, placed{Q: spoof, Tags: []string{"file:" + spoof}})
	require.NoError(t, err)
	for _, width := range []int64{390, 1280} {
		opts := []chromedp.EmulateViewportOption{}
		if width < 600 {
			opts = append(opts, chromedp.EmulateMobile)
		}
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 900, opts...), chromedp.Navigate(a.url+"queues/"+url.PathEscape(spoof)+"/clear")))
		until(t, ctx, `!!document.getElementById("confirm")`)
		h1, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".confirm h1").textContent`))
		require.NoError(t, err)
		require.Contains(t, h1, "queue invoices⟨U+202E⟩fdp.exe?")
		shot.save(ctx, fmt.Sprintf("rtl-clear-%d", width))
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"queues/"+url.PathEscape(spoof))))
		until(t, ctx, `!!document.querySelector(".tag")`)
		tag, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".tag").textContent`))
		require.NoError(t, err)
		require.Equal(t, "file:invoices⟨U+202E⟩fdp.exe", tag)
		laidOut(t, ctx)
		shot.save(ctx, fmt.Sprintf("rtl-queue-%d", width))
	}
}
