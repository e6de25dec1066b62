package browsertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// tagged is a job with ordinary tags and tags of 30 characters.
type tagged struct{ N int }

func (tagged) JobName() string { return "crm.SyncCustomer" }
func (j tagged) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "crm", Tags: []string{
		"customer:acme-corporation", fmt.Sprintf("region:eu-west-1-zone-b-%06d", j.N), "priority:high",
	}}
}
func (j tagged) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// brokenTags is a JavaScript test that returns the first tag drawn on
// more than one line, or "".
const brokenTags = `(function () {
	for (const t of document.querySelectorAll(".tag")) {
		const lh = parseFloat(getComputedStyle(t).lineHeight) || 16;
		const r = t.getBoundingClientRect();
		if (r.height > 1.6 * lh + 4) {
			return t.textContent + " is " + Math.round(r.width) + "x" + Math.round(r.height) + "px";
		}
	}
	return "";
})()`

// Tags of 30 characters keep to one line each on a queue page at 390
// and 1280 px, and on Completed at 1280 px.
func TestTagsKeepToOneLine(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	shot := newShots(t)
	for n := range 3 {
		_, err := runtime.Dispatch(a.ctx, tagged{N: n})
		require.NoError(t, err)
	}
	// A worker whose engine keeps the finished jobs of crm runs one more.
	e, err := runtime.Open(context.Background(), "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{
		Prefix: a.engine.Config().Prefix, KeepFinished: map[string]runtime.FinishedConfig{"crm": {MaxJobs: 10}}})
	require.NoError(t, err)
	defer e.Close()
	r := runtime.NewRouter()
	runtime.Register(r, "crm.SyncCustomer", func(ctx context.Context, j tagged) error { return nil })
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"crm"}, StopWhenEmpty: true, Logger: quiet})
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, w.Run(wctx))
	for n := range 3 {
		_, err := runtime.Dispatch(a.ctx, tagged{N: 10 + n})
		require.NoError(t, err)
	}

	for _, c := range []struct {
		name, path string
		width      int64
	}{
		{"queue-390", "queues/crm", 390},
		{"queue-1280", "queues/crm", 1280},
		{"completed-390", "completed?queue=crm", 390},
		{"completed-1280", "completed?queue=crm", 1280},
		{"search-390", "search?tag=customer", 390},
	} {
		opts := []chromedp.EmulateViewportOption{}
		if c.width < 600 {
			opts = append(opts, chromedp.EmulateMobile)
		}
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(c.width, 900, opts...), chromedp.Navigate(a.url+c.path)))
		until(t, ctx, `document.querySelectorAll(".tag").length >= 3`)
		// The tags in view: on a phone the table scrolls sideways in its box.
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector(".tag").scrollIntoView({block: "center", inline: "center"}), true)`))
		require.NoError(t, err)
		shot.save(ctx, "tags-"+c.name)
		broken, err := chromedp.Run(ctx, chromedp.Evaluate[string](brokenTags))
		require.NoError(t, err)
		require.Empty(t, broken, "%s: a tag breaks over lines", c.name)
		laidOut(t, ctx)
		if c.width >= 1280 {
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`Array.from(document.querySelectorAll(".scroll")).some(s => s.scrollWidth > s.clientWidth + 1)`))
			require.NoError(t, err)
			require.False(t, wide, "%s: the table fits the window without scrolling sideways", c.name)
		}
	}
}
