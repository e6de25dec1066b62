package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// note is a job with a payload of any size.
type note struct{ Text string }

func (note) JobName() string                { return "test.Note" }
func (note) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j note) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// serveDashboard serves e's dashboard with live refresh every refresh.
func serveDashboard(t *testing.T, e *runtime.Engine, refresh time.Duration) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.StripPrefix("/admin", dashboard.New(e, dashboard.Options{Refresh: refresh, Logger: quiet})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/admin/"
}

// Queues named with ":", a space, "/" and non-ASCII open from the
// overview's links; ".." is refused as a queue name.
func TestQueueNamesInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	bg := context.Background()
	e, err := runtime.Open(bg, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	defer e.Close()
	dctx := runtime.WithDispatcher(bg, e)
	names := []string{"mail:high", "a b", "ü/ß"}
	for _, q := range names {
		_, err := runtime.NewPendingDispatch(note{Text: q}).OnQueue(q).Dispatch(dctx)
		require.NoError(t, err)
	}
	_, err = runtime.NewPendingDispatch(note{}).OnQueue("..").Dispatch(dctx)
	require.ErrorIs(t, err, runtime.ErrInvalid, `".." is no queue name`)
	url := serveDashboard(t, e, -1)
	for _, q := range names {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url)))
		follow(t, ctx, `a[title="`+q+`"], td[title="`+q+`"] a`)
		until(t, ctx, `document.querySelector("h1 span") && document.querySelector("h1 span").textContent === `+jsString(q))
		until(t, ctx, `document.body.textContent.includes("test.Note")`)
	}
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// An open queue page with 1 MB payloads costs little to keep live: its
// refreshes leave the job list out and come back 304 while nothing
// changes. Measured as the browser counts bytes received.
func TestLiveRefreshIsCheapInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	bg := context.Background()
	e, err := runtime.Open(bg, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	defer e.Close()
	big := strings.Repeat("x", 900<<10)
	for range 5 {
		_, err := runtime.NewPendingDispatch(note{Text: big}).OnQueue("big").Dispatch(runtime.WithDispatcher(bg, e))
		require.NoError(t, err)
	}
	url := serveDashboard(t, e, time.Second)
	_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"queues/big")))
	until(t, ctx, `document.body.textContent.includes("test.Note")`)
	// Bytes per request, headers included: a 304 ends with its response,
	// a 200 with loadingFinished.
	var mu sync.Mutex
	bytes := map[network.RequestID]float64{}
	var refreshes atomic.Int64
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch f := ev.(type) {
		case *network.EventResponseReceived:
			refreshes.Add(1)
			bytes[f.RequestID] = max(bytes[f.RequestID], f.Response.EncodedDataLength)
		case *network.EventLoadingFinished:
			bytes[f.RequestID] = max(bytes[f.RequestID], f.EncodedDataLength)
		}
	}))
	time.Sleep(20 * time.Second)
	mu.Lock()
	var received float64
	for _, n := range bytes {
		received += n
	}
	mu.Unlock()
	t.Logf("figures: %d refreshes in 20 s received %.0f bytes in all", refreshes.Load(), received)
	require.GreaterOrEqual(t, refreshes.Load(), int64(15), "the page refreshed")
	require.Less(t, received, 50_000.0)
}

// With Redis stopped, a page says so within 3 s, and the banner goes
// within 3 s of Redis coming back.
func TestRedisDownBannerInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	srv := redistest.StartServer(t)
	bg := context.Background()
	e, err := runtime.Open(bg, "redis://"+srv.Addr+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	defer e.Close()
	url := serveDashboard(t, e, 500*time.Millisecond)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url)))
	until(t, ctx, `document.getElementById("redis-down") !== null && document.getElementById("redis-down").hidden`)

	srv.Stop()
	stopped := time.Now()
	until(t, ctx, `!document.getElementById("redis-down").hidden`)
	shown := time.Since(stopped)
	require.Contains(t, text(t, ctx, "redis-down"), "Redis is unreachable since")

	srv.Restart(t)
	back := time.Now()
	until(t, ctx, `document.getElementById("redis-down").hidden`)
	cleared := time.Since(back)
	t.Logf("figures: banner shown %v after Redis stopped, cleared %v after it came back", shown.Round(10*time.Millisecond), cleared.Round(10*time.Millisecond))
	require.Less(t, shown, 3*time.Second)
	require.Less(t, cleared, 3*time.Second)
}

// On a phone, each failed job's Retry and Forget buttons are on the
// screen.
func TestFailedButtonsOnAPhone(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	for i := range 3 {
		_, err := runtime.Dispatch(a.ctx, charge{Invoice: "INV-" + strings.Repeat("9", 40) + string(rune('a'+i)), Cents: 100})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		s, err := runtime.NewInspector(a.engine).Sizes(a.ctx, "billing")
		return err == nil && s.Failed == 3
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(a.url+"failed")))
	until(t, ctx, `document.querySelectorAll(".row-actions button").length === 6`)
	off, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(function () {
		var n = 0, bs = document.querySelectorAll(".row-actions button");
		for (var i = 0; i < bs.length; i++) {
			var r = bs[i].getBoundingClientRect();
			if (r.left < 0 || r.right > window.innerWidth) { n++; }
		}
		return n;
	})()`))
	require.NoError(t, err)
	require.Zero(t, off, "buttons past the screen's edge")
	laidOut(t, ctx)
}

// A name with an unclosed U+202E stays in its box and does not reverse
// the text beside it; a 200-character queue name is cut short, and the
// overview stays inside the window.
func TestHostileNamesStayInTheirBoxes(t *testing.T) {
	ctx := startBrowser(t)
	bg := context.Background()
	e, err := runtime.Open(bg, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	defer e.Close()
	long := strings.Repeat("q", 200)
	_, err = runtime.NewPendingDispatch(note{Text: "long"}).OnQueue(long).Dispatch(runtime.WithDispatcher(bg, e))
	require.NoError(t, err)
	err = e.Push(bg, &runtime.Envelope{Name: "evil\u202Egnp.exe", Queue: "bidi", Body: []byte{0x80}})
	require.NoError(t, err)
	url := serveDashboard(t, e, -1)

	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url)))
	until(t, ctx, `document.body.textContent.includes("qqqq")`)
	laidOut(t, ctx)
	width, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('td[title^="qqqq"]').getBoundingClientRect().width`))
	require.NoError(t, err)
	require.Less(t, width, 400.0, "the long name is cut")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"queues/bidi")))
	until(t, ctx, `document.querySelector("td.name") !== null`)
	bidi, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("td.name")).unicodeBidi`))
	require.NoError(t, err)
	require.Equal(t, "isolate", bidi)
	// The job's ID, in the next cell, reads left to right: its first
	// character is left of its last.
	ltr, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function () {
		var a = document.querySelector("td.mono a"), r = document.createRange();
		r.setStart(a.firstChild, 0); r.setEnd(a.firstChild, 1);
		var first = r.getBoundingClientRect().left;
		r.setStart(a.firstChild, a.textContent.length - 1); r.setEnd(a.firstChild, a.textContent.length);
		return first < r.getBoundingClientRect().left;
	})()`))
	require.NoError(t, err)
	require.True(t, ltr, "the ID beside the name reads left to right")

	// On the job's page its name and its ID share the heading.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"jobs/"+idText(t, ctx)+"?queue=bidi")))
	until(t, ctx, `document.querySelector("h1 span.mono") !== null`)
	ltr, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(function () {
		var d = document.querySelector("h1 span.mono"), r = document.createRange();
		r.setStart(d.firstChild, 0); r.setEnd(d.firstChild, 1);
		var first = r.getBoundingClientRect().left;
		r.setStart(d.firstChild, d.textContent.length - 1); r.setEnd(d.firstChild, d.textContent.length);
		return first < r.getBoundingClientRect().left;
	})()`))
	require.NoError(t, err)
	require.True(t, ltr, "the job's ID beside its name reads left to right")
}

// idText returns the text of the first job link on the page.
func idText(t *testing.T, ctx context.Context) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("td.mono a").textContent`))
	require.NoError(t, err)
	return id
}
