package browsertest

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A running job's page shows its progress bar; a waiting job's Cancel
// button asks first, then the job is shown cancelled; on a phone the
// button stays on the screen.
func TestJobProgressAndCancelInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	watchDialogs(t, ctx)

	running, err := runtime.Dispatch(a.ctx, batchMail{List: "newsletter"})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"jobs/"+running+"?queue=emails")))
	until(t, ctx, `!!document.querySelector("#job-progress progress")`)
	value, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector("#job-progress progress").value`))
	require.NoError(t, err)
	require.Equal(t, 60.0, value)
	width, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector("#job-progress progress").getBoundingClientRect().width`))
	require.NoError(t, err)
	require.Positive(t, width, "the bar is drawn")
	laidOut(t, ctx)

	waiting, err := runtime.Dispatch(a.ctx, buildReport{Month: "2026-11"}) // no worker serves reports
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(a.url+"jobs/"+waiting+"?queue=reports")))
	until(t, ctx, `!!document.getElementById("cancel-job")`)
	off, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function () {
		var r = document.getElementById("cancel-job").getBoundingClientRect();
		return r.left < 0 || r.right > window.innerWidth || r.width === 0;
	})()`))
	require.NoError(t, err)
	require.False(t, off, "the Cancel button is on the screen")
	laidOut(t, ctx)
	follow(t, ctx, "#cancel-job")
	until(t, ctx, `!!document.getElementById("confirm")`)
	follow(t, ctx, "#confirm")
	until(t, ctx, `!!document.getElementById("job-cancelled")`)
	until(t, ctx, textIs("job-state", "failed"))
	f, ok, err := runtime.NewInspector(a.engine).Failed().Get(a.ctx, "reports", waiting)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, f.Cancelled)
}
