package browsertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// CIEnv, when set (scripts/test sets it), makes a browser that cannot
// start fail the tests instead of skipping them; so does CI=true.
const CIEnv = "JOBGEN_CI"

// ScreenshotsEnv names a directory to save the screenshots in; by
// default they go to the test's temporary directory.
const ScreenshotsEnv = "JOBGEN_SCREENSHOTS"

func inCI() bool { return os.Getenv(CIEnv) != "" || os.Getenv("CI") == "true" }

// noBrowser skips the test, or fails it in CI.
func noBrowser(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatalf("%s (in CI the browser tests must run: scripts/test installs Debian's chromium)", msg)
	}
	t.Skipf("%s; skipping the browser tests (scripts/test installs Debian's chromium)", msg)
}

// startBrowser starts a headless Chromium with an empty profile of its
// own and returns a context for one tab.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	var bin string
	for _, name := range []string{os.Getenv("JOBGEN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		noBrowser(t, "no chromium on PATH")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		noBrowser(t, "chromium (%s) did not start: %v", bin, err)
	}
	return ctx
}

// Jobs of the demo application the dashboard looks at.

type sendWelcome struct {
	UserID int
	Email  string
}

func (sendWelcome) JobName() string { return "mail.SendWelcome" }
func (j sendWelcome) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "emails", Tags: []string{"mail", fmt.Sprintf("user:%d", j.UserID)}}
}
func (j sendWelcome) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type charge struct {
	Invoice string
	Cents   int
}

func (charge) JobName() string { return "billing.Charge" }
func (j charge) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "billing", Tags: []string{"billing", j.Invoice}}
}
func (j charge) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type buildReport struct{ Month string }

func (buildReport) JobName() string                { return "reports.Build" }
func (buildReport) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "reports"} }
func (j buildReport) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type slowMail struct{ To string }

func (slowMail) JobName() string                { return "mail.Slow" }
func (slowMail) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "emails"} }
func (j slowMail) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// batchMail reports its progress, then runs until the app stops.
type batchMail struct{ List string }

func (batchMail) JobName() string                { return "mail.Batch" }
func (batchMail) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "emails"} }
func (j batchMail) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type importRow struct{ Row int }

func (importRow) JobName() string                { return "imports.Row" }
func (importRow) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "imports"} }
func (j importRow) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// evil is attacker-controlled text, put in payloads, tags and errors.
const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`

// app is a demo application: an engine, a worker running its jobs, and
// the dashboard served under /admin/.
type app struct {
	ctx    context.Context
	engine *runtime.Engine
	url    string
	broken atomic.Bool   // charges fail while set
	slow   chan struct{} // mail.Slow jobs run until it is closed
	mu     sync.Mutex
	ran    map[string]int // runs per invoice
}

func (a *app) runs(invoice string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ran[invoice]
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// startApp starts the demo application; opts, if given, change the
// dashboard's options.
func startApp(t *testing.T, opts ...func(*dashboard.Options)) *app {
	t.Helper()
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	a := &app{ctx: runtime.WithDispatcher(ctx, e), engine: e, ran: map[string]int{}, slow: make(chan struct{})}
	a.broken.Store(true)
	r := runtime.NewRouter()
	runtime.Register(r, "mail.SendWelcome", func(ctx context.Context, j sendWelcome) error { return nil })
	runtime.Register(r, "billing.Charge", func(ctx context.Context, j charge) error {
		a.mu.Lock()
		a.ran[j.Invoice]++
		a.mu.Unlock()
		if a.broken.Load() {
			return fmt.Errorf("card declined for invoice %s", j.Invoice)
		}
		return nil
	})
	runtime.Register(r, "reports.Build", func(ctx context.Context, j buildReport) error { return nil })
	runtime.Register(r, "imports.Row", func(ctx context.Context, j importRow) error { return nil })
	runtime.Register(r, "mail.Batch", func(ctx context.Context, j batchMail) error {
		if err := runtime.Progress(ctx, 60, "sent 60 of 100"); err != nil {
			return err
		}
		select {
		case <-a.slow:
		case <-ctx.Done():
		}
		return nil
	})
	runtime.Register(r, "mail.Slow", func(ctx context.Context, j slowMail) error {
		select {
		case <-a.slow:
		case <-ctx.Done():
		}
		return nil
	})
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{
		Name: "web-1", Queues: []string{"emails", "billing"}, Concurrency: 4,
		Sleep: 50 * time.Millisecond, MonitorEvery: 100 * time.Millisecond, Logger: quiet,
	})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(wctx) }()

	mux := http.NewServeMux()
	o := dashboard.Options{Refresh: 250 * time.Millisecond, PageSize: 20, Title: "demo"}
	for _, f := range opts {
		f(&o)
	}
	mux.Handle("/admin/", http.StripPrefix("/admin", dashboard.New(e, o)))
	srv := httptest.NewServer(mux)
	a.url = srv.URL + "/admin/"
	t.Cleanup(func() {
		srv.Close()
		select {
		case <-a.slow:
		default:
			close(a.slow)
		}
		stop()
		<-done
		_ = e.Close()
	})
	return a
}

// shots saves screenshots.
type shots struct {
	t   *testing.T
	dir string
}

func newShots(t *testing.T) shots {
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return shots{t: t, dir: dir}
}

func (s shots) save(ctx context.Context, name string) {
	s.t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(s.t, err)
	path := filepath.Join(s.dir, name+".png")
	require.NoError(s.t, os.WriteFile(path, buf, 0o644))
	s.t.Logf("screenshot %s", path)
}

// text returns the text of the element with id.
func text(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
	require.NoError(t, err)
	return strings.TrimSpace(s)
}

// until waits for a JavaScript expression to be true in the page. A
// poll cut short by a navigation starts again in the new page.
func until(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	var err error
	for range 5 {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second)))
		if err == nil || !strings.Contains(err.Error(), "context with specified id") {
			break
		}
	}
	require.NoError(t, err, "waiting for %s", expr)
}

// follow clicks what sel finds and waits for the page it leads to.
func follow[S chromedp.Selectable](t *testing.T, ctx context.Context, sel S) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(sel)))
	require.NoError(t, err)
}

// textIs is a JavaScript test of the text of element id.
func textIs(id, want string) string {
	return fmt.Sprintf(`(document.getElementById(%q)||{}).textContent && document.getElementById(%q).textContent.trim() === %q`, id, id, want)
}

// laidOut checks the page at the current size: nothing wider than the
// window (wide tables scroll in their own box), and no two cards, charts,
// tabs or navigation links overlapping.
func laidOut(t *testing.T, ctx context.Context) {
	t.Helper()
	problem, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function () {
		if (document.documentElement.scrollWidth > window.innerWidth) {
			return "page is " + document.documentElement.scrollWidth + "px wide in a " + window.innerWidth + "px window";
		}
		var groups = [".card", ".chart-box", ".top nav a", ".tabs a", ".actions > *", ".facts dd", ".schedule td", ".schedule button"];
		for (var g = 0; g < groups.length; g++) {
			var els = document.querySelectorAll(groups[g]);
			for (var i = 0; i < els.length; i++) {
				for (var j = i + 1; j < els.length; j++) {
					var a = els[i].getBoundingClientRect(), b = els[j].getBoundingClientRect();
					if (a.width && b.width && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
						return groups[g] + " " + i + " overlaps " + j;
					}
				}
			}
		}
		return "";
	})()`))
	require.NoError(t, err)
	require.Empty(t, problem)
}

// dialogs fails the test if any page opens a JavaScript dialog: none of
// the dashboard's does, so one would be injected script.
func watchDialogs(t *testing.T, ctx context.Context) *atomic.Int32 {
	var n atomic.Int32
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			n.Add(1)
			t.Errorf("a page opened a %s dialog: %q", ev.Type, ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return &n
}

func TestDashboardInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	shot := newShots(t)
	dialogs := watchDialogs(t, ctx)

	// A working day: welcome emails, charges that fail (one with
	// attacker-controlled text), reports due later, an import batch.
	for i := range 25 {
		_, err := runtime.Dispatch(a.ctx, sendWelcome{UserID: i, Email: fmt.Sprintf("user%d@example.com", i)})
		require.NoError(t, err)
	}
	var charges []string
	for _, inv := range []string{"INV-1001", "INV-1002", evil} {
		id, err := runtime.Dispatch(a.ctx, charge{Invoice: inv, Cents: 4200})
		require.NoError(t, err)
		charges = append(charges, id)
	}
	for _, m := range []string{"2026-01", "2026-02", "2026-03"} {
		_, err := runtime.NewPendingDispatch(buildReport{Month: m}).Delay(time.Hour).Dispatch(a.ctx)
		require.NoError(t, err)
	}
	var rows []runtime.Job
	for i := range 4 {
		rows = append(rows, importRow{Row: i})
	}
	batchID, err := runtime.NewBatch(rows...).Name("customers.csv").Dispatch(a.ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := runtime.NewInspector(a.engine).Failed().Count(a.ctx, "billing")
		s, err2 := runtime.NewInspector(a.engine).Sizes(a.ctx, "emails")
		return err == nil && err2 == nil && n == 3 && s.Total() == 0
	}, 20*time.Second, 10*time.Millisecond)

	// Overview: the queues, the live worker, the counts.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.url)))
	until(t, ctx, textIs("workers-alive", "1"))
	until(t, ctx, textIs("total-failed", "3"))
	until(t, ctx, textIs("hour-processed", "25"))
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("queues")))
	require.NoError(t, err)
	for _, q := range []string{"billing", "emails", "imports", "reports"} {
		require.Contains(t, body, q)
	}
	laidOut(t, ctx)
	shot.save(ctx, "overview-1280")

	// Live: more jobs run, the numbers change without a reload.
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.stayed = 42`)))
	for i := range 10 {
		_, err := runtime.Dispatch(a.ctx, sendWelcome{UserID: 100 + i, Email: "late@example.com"})
		require.NoError(t, err)
	}
	until(t, ctx, textIs("hour-processed", "35"))
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.stayed || 0`))
	require.NoError(t, err)
	require.Equal(t, 42, stayed, "the page updated in place, not by a reload")

	// A queue with delayed jobs, from the overview's link.
	follow(t, ctx, chromedp.CSS(`#queues a[href$="queues/reports"]`))
	until(t, ctx, `document.querySelector("h1") && document.querySelector("h1").textContent.includes("reports")`)
	follow(t, ctx, chromedp.CSS(`.tabs a[href="?state=delayed"]`))
	until(t, ctx, `document.querySelectorAll("table.jobs tbody tr").length === 3 && document.body.textContent.includes("reports.Build")`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`table.jobs details.payload summary`))))
	// The three are due in the same millisecond or so, and jobs due at
	// once are listed by ID, whose bits after the time are random: the
	// first row is any of them.
	until(t, ctx, `/"Month": "2026-0[123]"/.test(document.querySelector("table.jobs details.payload pre").textContent)`)
	laidOut(t, ctx)
	shot.save(ctx, "queue-1280")

	// Pause the emails queue: a job dispatched then waits; resume: it runs.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"queues/emails")))
	follow(t, ctx, chromedp.ID("pause"))
	until(t, ctx, textIs("queue-state", "paused"))
	paused, err := runtime.NewInspector(a.engine).QueuePaused(a.ctx, "emails")
	require.NoError(t, err)
	require.True(t, paused)
	waiting, err := runtime.Dispatch(a.ctx, sendWelcome{UserID: 7, Email: "paused@example.com"})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"queues/emails")))
	until(t, ctx, fmt.Sprintf(`document.body.textContent.includes(%q)`, waiting))
	follow(t, ctx, chromedp.ID("resume"))
	until(t, ctx, textIs("queue-state", "running"))
	until(t, ctx, `document.querySelector('.tabs a[href="?state=ready"] b').textContent === "0"`)

	// Failed jobs: the attacker's text is shown as text and runs nothing.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"failed?queue=billing")))
	until(t, ctx, `document.querySelectorAll("table.jobs tbody tr").length === 3`)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	require.NoError(t, err)
	require.Contains(t, shown, "card declined for invoice "+evil)
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("main script, main img").length`))
	require.NoError(t, err)
	require.Zero(t, injected)
	laidOut(t, ctx)
	shot.save(ctx, "failed-1280")
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload()))
	until(t, ctx, `document.querySelectorAll("table.jobs tbody tr").length === 3`)
	laidOut(t, ctx)
	shot.save(ctx, "failed-with-jobs-390")
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Reload()))
	until(t, ctx, `document.querySelectorAll("table.jobs tbody tr").length === 3`)

	// Retry one from the page once the card works: it runs again and
	// leaves the failed list.
	a.broken.Store(false)
	before := a.runs("INV-1001")
	follow(t, ctx, chromedp.CSS(fmt.Sprintf(`button[value="retry id=%s&q=billing"]`, charges[0])))
	until(t, ctx, fmt.Sprintf(`!document.body.textContent.includes(%q) && document.querySelectorAll("table.jobs tbody tr").length === 2`, charges[0]))
	require.Eventually(t, func() bool { return a.runs("INV-1001") == before+1 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"jobs/"+charges[0])))
	until(t, ctx, `document.getElementById("job-state").textContent.includes("Not in any queue")`)

	// Retry the rest in bulk.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"failed?queue=billing")))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("select-all"))))
	follow(t, ctx, chromedp.ID("retry-selected"))
	until(t, ctx, `document.body.textContent.includes("No failed job.")`)
	require.Eventually(t, func() bool { return a.runs(evil) == 2 }, 20*time.Second, 10*time.Millisecond)

	// A batch, from the list of batches: its counts, then cancelled
	// from the page.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"batches")))
	until(t, ctx, `document.getElementById("batches").textContent.includes("customers.csv")`)
	follow(t, ctx, chromedp.CSS(`#batches a[href$="batches/`+batchID+`"]`))
	until(t, ctx, textIs("batch-total", "4"))
	require.Equal(t, "4", text(t, ctx, "batch-pending"))
	require.Equal(t, "0", text(t, ctx, "batch-succeeded"))
	laidOut(t, ctx)
	shot.save(ctx, "batch-1280")
	follow(t, ctx, chromedp.ID("cancel-batch"))
	until(t, ctx, `document.getElementById("batch-state").textContent.includes("cancelled")`)
	st, ok, err := runtime.NewInspector(a.engine).Batches().Find(a.ctx, batchID)
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, st.CancelledAt.IsZero())

	// Workers, one of them running a job that takes its time.
	slowID, err := runtime.Dispatch(a.ctx, slowMail{To: "ada@example.com"})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"workers")))
	until(t, ctx, `document.getElementById("workers").textContent.includes("web-1") && document.getElementById("workers").textContent.includes("mail.Slow")`)
	busy, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#workers tbody td.n:nth-of-type(5)")))
	require.NoError(t, err)
	require.Equal(t, "1 / 4", strings.TrimSpace(busy))
	laidOut(t, ctx)
	shot.save(ctx, "workers-1280")
	follow(t, ctx, chromedp.CSS(`#workers a[href*="`+slowID+`"]`))
	until(t, ctx, `document.getElementById("job-state").textContent.includes("reserved")`)
	shown, err = chromedp.Run(ctx, chromedp.Text(chromedp.ID("job")))
	require.NoError(t, err)
	require.Contains(t, shown, "by web-1")
	close(a.slow)
	until(t, ctx, `document.body.textContent.includes("Not in any queue")`)

	// The same pages on a phone.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)))
	for _, p := range []struct{ name, path, ready string }{
		{"overview-390", "", textIs("workers-alive", "1")},
		{"queue-390", "queues/reports?state=delayed", `document.querySelectorAll("table.jobs tbody tr").length === 3`},
		{"failed-390", "failed", `document.body.textContent.includes("No failed job.")`},
		{"batch-390", "batches/" + batchID, textIs("batch-total", "4")},
	} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+p.path)))
		until(t, ctx, p.ready)
		laidOut(t, ctx)
		shot.save(ctx, p.name)
	}
	require.Zero(t, dialogs.Load())

	// With JavaScript off the pages still read: they are rendered on the
	// server, and only live refresh needs the script.
	_, err = chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.url+"queues/reports?state=delayed")))
	rowsText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.jobs tbody")))
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(rowsText, "reports.Build"))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url)))
	require.Equal(t, "1", text(t, ctx, "workers-alive"))
}

// A page refuses a POST made from another site, whatever the browser
// sends with it.
func TestCrossSiteFormIsRefused(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	_, err := runtime.Dispatch(a.ctx, buildReport{Month: "x"})
	require.NoError(t, err)
	// Another origin: a server of its own whose page posts to the dashboard.
	evilSite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%squeues/reports/pause"></form><p id="ready">ready</p>`, a.url)
	}))
	defer evilSite.Close()
	// 127.0.0.1 and localhost are different sites to the browser.
	site := strings.Replace(evilSite.URL, "127.0.0.1", "localhost", 1)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(site), chromedp.WaitVisible(chromedp.ID("ready"))))
	_, err = chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Evaluate[chromedp.Void](`document.getElementById("f").submit()`)))
	require.NoError(t, err)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	require.Contains(t, shown, "cross-origin request refused")
	paused, err := runtime.NewInspector(a.engine).QueuePaused(a.ctx, "reports")
	require.NoError(t, err)
	require.False(t, paused)
}

// A banner (the dashboard command's warning when it runs with no
// password) sits above the header on every page, at both sizes, as text,
// and does not push the page wider than the window.
func TestBannerInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t, func(o *dashboard.Options) {
		o.Banner = "Open to anyone who can reach 0.0.0.0:8080: no password is set (--insecure). Set $JOBGEN_DASHBOARD_PASSWORD. " + evil
	})
	shot := newShots(t)
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"1280", 1280, 800}, {"390", 390, 844}} {
		viewport := chromedp.EmulateViewport(size.width, size.height)
		if size.width < 800 {
			viewport = chromedp.EmulateViewport(size.width, size.height, chromedp.EmulateMobile)
		}
		require.NoError(t, chromedp.Do(ctx, viewport, chromedp.Navigate(a.url+"failed")))
		until(t, ctx, `document.querySelector(".banner") !== null`)
		require.Contains(t, text(t, ctx, "banner"), "<script>alert(1)</script>", "the banner is text")
		above, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".banner").getBoundingClientRect().bottom <= document.querySelector("header.top").getBoundingClientRect().top`))
		require.NoError(t, err)
		require.True(t, above, "the banner sits above the header at %s", size.name)
		laidOut(t, ctx)
		shot.save(ctx, "banner-"+size.name)
	}
}
