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

// Documents rendered and archived by a worker on a queue that keeps its
// finished jobs: render takes about 20 ms, archive about 80 ms.

type renderPDF struct{ Doc string }

func (renderPDF) JobName() string { return "pdf.Render" }
func (j renderPDF) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "docs", Tags: []string{"pdf", "doc:" + j.Doc}}
}
func (j renderPDF) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type archivePDF struct{ Doc string }

func (archivePDF) JobName() string { return "pdf.Archive" }
func (j archivePDF) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "docs", Tags: []string{"archive"}}
}
func (j archivePDF) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// runDocs runs 6 renders and 4 archives through a worker whose engine
// keeps the finished jobs of queue docs, under the dashboard's prefix,
// and returns the IDs of the renders.
func runDocs(t *testing.T, a *app) []string {
	t.Helper()
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{
		Prefix: a.engine.Config().Prefix, KeepFinished: map[string]runtime.FinishedConfig{"docs": {MaxJobs: 100}}})
	require.NoError(t, err)
	defer e.Close()
	r := runtime.NewRouter()
	runtime.RegisterResult(r, "pdf.Render", func(ctx context.Context, j renderPDF) (string, error) {
		time.Sleep(20 * time.Millisecond)
		return "rendered " + j.Doc, nil
	})
	runtime.Register(r, "pdf.Archive", func(ctx context.Context, j archivePDF) error {
		time.Sleep(80 * time.Millisecond)
		return nil
	})
	dctx := runtime.WithDispatcher(ctx, e)
	var renders []string
	for n := range 6 {
		id, err := renderPDF{Doc: fmt.Sprint(n)}.dispatch(dctx)
		require.NoError(t, err)
		renders = append(renders, id)
		if n < 4 {
			_, err := runtime.Dispatch(dctx, archivePDF{Doc: fmt.Sprint(n)})
			require.NoError(t, err)
		}
	}
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Name: "docs-1", Queues: []string{"docs"}, StopWhenEmpty: true, Concurrency: 2, Logger: quiet})
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, w.Run(wctx))
	return renders
}

func (j renderPDF) dispatch(ctx context.Context) (string, error) { return runtime.Dispatch(ctx, j) }

// The Completed and Metrics pages, with the jobs a real worker ran.
func TestCompletedAndMetricsPagesInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	renders := runDocs(t, a)
	shot := newShots(t)

	// Completed: reached from the navigation, then the docs queue.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.url)))
	follow(t, ctx, chromedp.CSS(`.top nav a[href$="completed"]`))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"completed?queue=docs")))
	until(t, ctx, `document.querySelectorAll("#completed tbody tr").length === 10`)
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#completed tbody tr").innerText`))
	require.NoError(t, err)
	require.Contains(t, first, "docs-1")
	laidOut(t, ctx)
	shot.save(ctx, "completed-1280")

	// Search by tag through the form: only the renders, each with its
	// result's size.
	_, err = chromedp.Run(ctx, chromedp.SetValue(chromedp.CSS(`input[name="tag"]`), "pdf"))
	require.NoError(t, err)
	follow(t, ctx, chromedp.CSS(`form.filters button`))
	until(t, ctx, `document.querySelectorAll("#completed tbody tr").length === 6`)
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#completed tbody td.name")).map(e => e.textContent)`))
	require.NoError(t, err)
	for _, n := range names {
		require.Equal(t, "pdf.Render", n)
	}
	sizes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#completed tbody tr")).map(r => r.querySelector("td.result").textContent)`))
	require.NoError(t, err)
	for _, s := range sizes {
		require.Equal(t, "11 B", s, "msgpack of \"rendered n\"")
	}

	// Search by ID.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"completed?queue=docs&id="+renders[2])))
	until(t, ctx, `document.querySelectorAll("#completed tbody tr").length === 1`)
	row, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#completed tbody tr").innerText`))
	require.NoError(t, err)
	require.Contains(t, row, renders[2])
	require.Contains(t, row, "doc:2")

	// Metrics: both classes, with counts and runtimes in range.
	follow(t, ctx, chromedp.CSS(`.top nav a[href$="metrics"]`))
	until(t, ctx, `document.querySelectorAll("#metrics tbody tr[data-class]").length === 2`)
	cell := func(class, col string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('#metrics tr[data-class=%q] .%s').textContent`, class, col)))
		require.NoError(t, err)
		return s
	}
	require.Equal(t, "6", cell("pdf.Render", "hour-jobs"))
	require.Equal(t, "4", cell("pdf.Archive", "hour-jobs"))
	require.Equal(t, "6", cell("pdf.Render", "day-jobs"))
	ms := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, s)
		return d
	}
	render, archive := ms(cell("pdf.Render", "hour-p50")), ms(cell("pdf.Archive", "hour-p50"))
	require.True(t, render >= 15*time.Millisecond && render <= 60*time.Millisecond, "render p50 %v", render)
	require.True(t, archive >= 60*time.Millisecond && archive <= 200*time.Millisecond, "archive p50 %v", archive)
	laidOut(t, ctx)
	shot.save(ctx, "metrics-1280")

	// On a phone the tables scroll in their own box.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	laidOut(t, ctx)
	shot.save(ctx, "metrics-390")
}
