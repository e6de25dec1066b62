package browsertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// wfPart is a step of the browser's workflow; one of every ten fails.
type wfPart struct {
	N int
	Q string
}

func (wfPart) JobName() string                  { return "parts.Build" }
func (j wfPart) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: j.Q, Tries: 1} }
func (j wfPart) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }

// A workflow of a root, 30 parts after it (three fail) and a step held
// on a queue no worker serves, then an assembly after the parts: its
// page draws the middle layer's failed and running steps first, counts
// the rest in one box, and a click on a step opens its job; its Cancel
// button cancels it.
func TestWorkflowGraphInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	bg := context.Background()
	e, err := runtime.Open(bg, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	dctx := runtime.WithDispatcher(bg, e)
	wf := runtime.NewWorkflow().OnStepFailure(runtime.ContinueWorkflow)
	root := runtime.AddStep(wf, wfPart{N: 0, Q: "parts"})
	var parts []runtime.Parent
	for i := 1; i <= 30; i++ {
		parts = append(parts, runtime.AddStep(wf, wfPart{N: i, Q: "parts"}, runtime.After(root)))
	}
	runtime.AddStep(wf, wfPart{N: 99, Q: "held"}, runtime.After(root))
	runtime.AddStep(wf, wfPart{N: 100, Q: "parts"}, runtime.After(parts...))
	id, err := wf.Dispatch(dctx)
	require.NoError(t, err)
	r := runtime.NewRouter()
	runtime.Register(r, "parts.Build", func(ctx context.Context, j wfPart) error {
		if j.N%10 == 5 {
			return errors.New("part out of tolerance")
		}
		return nil
	})
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"parts"}, StopWhenEmpty: true, Concurrency: 4, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	require.NoError(t, w.Run(wctx))
	srv := httptest.NewServer(http.StripPrefix("/admin", dashboard.New(e, dashboard.Options{Logger: quiet, Refresh: -1})))
	t.Cleanup(srv.Close)
	base := srv.URL + "/admin/"
	watchDialogs(t, ctx)

	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(2600, 900), chromedp.Navigate(base+"workflows/"+pe(id))))
	until(t, ctx, `!!document.getElementById("workflow-graph")`)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[
		document.querySelectorAll("#workflow-graph g.wf-node").length,
		document.querySelectorAll("#workflow-graph g.st-failed").length,
		document.querySelectorAll("#workflow-graph g.st-released").length,
		document.querySelectorAll("#workflow-graph g.wf-more").length,
		document.querySelectorAll("#workflow-graph a").length
	]`))
	require.NoError(t, err)
	require.Equal(t, []int{1 + 12 + 1 + 1, 3, 1, 1, 1 + 12 + 1}, got, "nodes, failed, released, summaries, links")
	more, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#workflow-graph g.wf-more").textContent`))
	require.NoError(t, err)
	require.Contains(t, more, "+19 more")
	require.Contains(t, more, "19 succeeded")
	if dir := os.Getenv(ScreenshotsEnv); dir != "" {
		shot, err := chromedp.Run(ctx, chromedp.Screenshot("#workflow-graph"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "workflow-graph.png"), shot, 0o644))
		newShots(t).full(ctx, "workflow-page")
	}

	// On a phone the steps table reads as one card a step: no cell lies
	// past the page's right edge, to be scrolled to.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"workflows/"+pe(id))))
	until(t, ctx, `!!document.getElementById("workflow-steps")`)
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const edge = document.querySelector("main").getBoundingClientRect().right;
		const out = Array.from(document.querySelectorAll("#workflow-steps td")).find(td => td.getBoundingClientRect().right > edge + 1);
		return out ? out.dataset.label + " ends at " + Math.round(out.getBoundingClientRect().right) + "px, past " + Math.round(edge) + "px" : "";
	})()`))
	require.NoError(t, err)
	require.Empty(t, wide, "the steps table fits a 390px window")
	laidOut(t, ctx)
	if os.Getenv(ScreenshotsEnv) != "" {
		newShots(t).full(ctx, "workflow-page-390")
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(2600, 900), chromedp.Navigate(base+"workflows/"+pe(id))))
	until(t, ctx, `!!document.getElementById("workflow-graph")`)

	// A failed step opens its job's page.
	follow(t, ctx, "#workflow-graph a:has(g.st-failed)")
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
	require.NoError(t, err)
	require.Regexp(t, `^/admin/jobs/[0-9A-Z]{26}\?queue=parts$`, loc)
	until(t, ctx, `document.body.innerText.includes("part out of tolerance")`)

	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"workflows/"+pe(id))))
	until(t, ctx, `!!document.getElementById("workflow-graph")`)
	// The assembly waits for 30 parts: their list wraps in its column
	// (a fan-in's list of thousands stays in the page), and the steps
	// table needs no sideways scroll at 1280px.
	got, err = chromedp.Run(ctx, chromedp.Evaluate[[]int](`(() => {
		const box = document.getElementById("workflow-steps").parentElement;
		const waits = Array.from(document.querySelectorAll("#workflow-steps td[data-label='Waits for']"));
		const widest = Math.max(...waits.map(td => td.getBoundingClientRect().width));
		return [box.scrollWidth - box.clientWidth, Math.round(100 * widest / box.clientWidth)];
	})()`))
	require.NoError(t, err)
	require.LessOrEqual(t, got[0], 1, "the steps table scrolls sideways by %dpx at 1280px", got[0])
	require.LessOrEqual(t, got[1], 40, "the widest Waits for cell takes %d%% of the table's width", got[1])
	if os.Getenv(ScreenshotsEnv) != "" {
		newShots(t).full(ctx, "workflow-page-1280")
	}
	until(t, ctx, textIs("workflow-state", "running"))
	follow(t, ctx, "#cancel-workflow")
	until(t, ctx, `(document.getElementById("workflow-state")||{textContent:""}).textContent.trim().startsWith("cancelled")`)
	info, err := runtime.NewInspector(e).Workflow(bg, id)
	require.NoError(t, err)
	require.Equal(t, runtime.WorkflowCancelled, info.State)
	retry, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById("retry-workflow")`))
	require.NoError(t, err)
	require.True(t, retry, "a cancelled workflow offers Retry")
}
