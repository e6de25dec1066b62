package browsertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// sweepPage is one page the sweep opens: the GET route that serves it,
// as registered, and its path from the dashboard's root with the hostile
// data. A route may have several pages (a queue's tabs, a job in each
// state); a new route needs at least one line here.
type sweepPage struct {
	route string
	name  string                  // of the screenshot
	path  func(h *hostile) string // from the dashboard's root
	shows []string                // text the page must show, as shown
	// download: the route answers a file, not a page; the sweep fetches
	// it from a page of the dashboard and checks that it is served.
	download bool
}

func pe(s string) string { return url.PathEscape(s) }
func qe(s string) string { return url.QueryEscape(s) }

// shown is s as the dashboard shows it: a right-to-left override is
// spelled out.
func shown(s string) string { return strings.ReplaceAll(s, "\u202E", "⟨U+202E⟩") }

func fixed(p string) func(*hostile) string { return func(*hostile) string { return p } }

// sweepPages is every page of the dashboard with hostile data in it.
var sweepPages = []sweepPage{
	{route: "GET /{$}", name: "overview", path: fixed(""), shows: []string{shown(rtlQueue), arabicQueue, hebrewQueue, escapedQueue, xssQueue, "queues 1–10 of 12", "next queues"}},
	{route: "GET /{$}", name: "overview-next-queues", path: fixed("?from=10"), shows: []string{"queues 11–12 of 12", shown(fillerQueue(4)), "queues before"}},
	{route: "GET /workers", name: "workers", path: fixed("workers"), shows: []string{shown("web\u202E1-tsoh"), slowQueue}},
	{route: "GET /queues/{queue}", name: "queue-escaped-ready", path: fixed("queues/" + pe(escapedQueue)), shows: []string{escapedQueue, "in group", "customer:acme-corporation-"}},
	{route: "GET /queues/{queue}", name: "queue-escaped-delayed", path: fixed("queues/" + pe(escapedQueue) + "?state=delayed"), shows: []string{escapedQueue}},
	{route: "GET /queues/{queue}", name: "queue-xss", path: fixed("queues/" + pe(xssQueue)), shows: []string{xssQueue, "evil." + evil}},
	{route: "GET /queues/{queue}", name: "queue-long-held", path: fixed("queues/" + pe(longQueue)), shows: []string{longQueue, "held"}},
	{route: "GET /queues/{queue}", name: "queue-rtl", path: fixed("queues/" + pe(rtlQueue)), shows: []string{shown(rtlQueue)}},
	{route: "GET /queues/{queue}", name: "queue-arabic-paused", path: fixed("queues/" + pe(arabicQueue)), shows: []string{arabicQueue, "paused"}},
	{route: "GET /queues/{queue}", name: "queue-hebrew-limited", path: fixed("queues/" + pe(hebrewQueue)), shows: []string{hebrewQueue, "10 per 1m"}},
	{route: "GET /queues/{queue}", name: "queue-slow-reserved", path: fixed("queues/" + pe(slowQueue) + "?state=reserved"), shows: []string{slowQueue, shown("web\u202E1-tsoh")}},
	{route: "GET /queues/{queue}/clear", name: "clear-rtl", path: fixed("queues/" + pe(rtlQueue) + "/clear"), shows: []string{"queue " + shown(rtlQueue) + "?"}},
	{route: "GET /queues/{queue}/clear", name: "clear-escaped", path: fixed("queues/" + pe(escapedQueue) + "/clear"), shows: []string{"queue " + escapedQueue + "?"}},
	{route: "GET /failed", name: "failed-all", path: fixed("failed"), shows: []string{"card issuer", evil, shown(rtlQueue)}},
	{route: "GET /failed", name: "failed-next-queues", path: fixed("failed?from=10"), shows: []string{"in queues 11–12 of 12", "No failed job in these queues."}},
	{route: "GET /failed", name: "failed-escaped", path: fixed("failed?queue=" + qe(escapedQueue)), shows: []string{escapedQueue, "card issuer"}},
	{route: "GET /failed/flush", name: "flush-rtl", path: fixed("failed/flush?queue=" + qe(rtlQueue)), shows: []string{shown(rtlQueue)}},
	{route: "GET /jobs", name: "find-job", path: func(h *hostile) string { return "jobs?id=" + h.ready[escapedQueue][0] }, shows: []string{escapedQueue, "Cancel job"}},
	{route: "GET /jobs/{id}", name: "job-ready", path: func(h *hostile) string { return "jobs/" + h.ready[escapedQueue][0] + "?queue=" + qe(escapedQueue) }, shows: []string{escapedQueue, "campaign:black-friday-2026-"}},
	{route: "GET /jobs/{id}", name: "job-grouped", path: func(h *hostile) string { return "jobs/" + h.grouped[0] + "?queue=" + qe(escapedQueue) }, shows: []string{escapedQueue, "crm.TenantImport"}},
	{route: "GET /jobs/{id}", name: "job-failed", path: func(h *hostile) string { return "jobs/" + h.failed[xssQueue] + "?queue=" + qe(xssQueue) }, shows: []string{xssQueue, "card issuer", "Retry"}},
	{route: "GET /jobs/{id}", name: "job-finished", path: func(h *hostile) string { return "jobs/" + h.finished[rtlQueue] + "?queue=" + qe(rtlQueue) }, shows: []string{shown(rtlQueue)}},
	{route: "GET /jobs/{id}", name: "job-result", path: func(h *hostile) string { return "jobs/" + h.result + "?queue=" + qe(escapedQueue) }, shows: []string{escapedQueue, "crm.Quote"}},
	{route: "GET /jobs/{id}", name: "job-running", path: func(h *hostile) string { return "jobs/" + h.running + "?queue=" + qe(slowQueue) }, shows: []string{slowQueue, shown("web\u202E1-tsoh")}},
	{route: "GET /jobs/{id}", name: "job-markup-name", path: func(h *hostile) string { return "jobs/" + h.rawName + "?queue=" + qe(xssQueue) }, shows: []string{"evil." + evil + "⟨U+202E⟩gnp.exe"}},
	{route: "GET /jobs/{id}/cancel", name: "cancel-escaped", path: func(h *hostile) string {
		return "jobs/" + h.ready[escapedQueue][0] + "/cancel?queue=" + qe(escapedQueue) + "&attempt=0"
	}, shows: []string{"queue " + escapedQueue + "?"}},
	{route: "GET /jobs/{id}/payload", name: "payload", download: true, path: func(h *hostile) string {
		return "jobs/" + h.ready[escapedQueue][0] + "/payload?queue=" + qe(escapedQueue)
	}},
	{route: "GET /jobs/{id}/result", name: "result", download: true, path: func(h *hostile) string {
		return "jobs/" + h.result + "/result?queue=" + qe(escapedQueue)
	}},
	{route: "GET /recent", name: "recent-completed", path: fixed("recent?kind=completed"), shows: []string{escapedQueue, "crm.Quote"}},
	{route: "GET /recent", name: "recent-failed", path: fixed("recent?kind=failed"), shows: []string{"card issuer", shown(rtlQueue)}},
	{route: "GET /recent", name: "recent-pending", path: fixed("recent?kind=pending"), shows: []string{escapedQueue, "customer:acme-corporation-"}},
	{route: "GET /history", name: "history-escaped", path: fixed("history?queue=" + qe(escapedQueue)), shows: []string{escapedQueue, "crm.Quote"}},
	{route: "GET /history", name: "history-rtl", path: fixed("history?queue=" + qe(rtlQueue) + "&span=12h"), shows: []string{shown(rtlQueue)}},
	{route: "GET /tags", name: "tags", path: fixed("tags"), shows: []string{"file:" + shown(rtlQueue), "note:" + evil}},
	{route: "GET /tags", name: "tag-rtl", path: fixed("tags?tag=" + qe("file:"+rtlQueue)), shows: []string{"file:" + shown(rtlQueue), escapedQueue}},
	{route: "GET /tags", name: "tag-markup", path: fixed("tags?tag=" + qe("note:"+evil)), shows: []string{"note:" + evil, "failed"}},
	{route: "GET /redis", name: "redis", path: fixed("redis"), shows: []string{"noeviction"}},
	{route: "GET /search", name: "search-tag", path: fixed("search?tag=customer:acme"), shows: []string{"customer:acme-corporation-", shown(rtlQueue)}},
	{route: "GET /search", name: "search-escaped", path: fixed("search?name=crm&queue=" + qe(escapedQueue)), shows: []string{escapedQueue}},
	{route: "GET /completed", name: "completed-escaped", path: fixed("completed?queue=" + qe(escapedQueue)), shows: []string{"customer:acme-corporation-"}},
	{route: "GET /completed", name: "completed-rtl", path: fixed("completed?queue=" + qe(rtlQueue)), shows: []string{"file:" + shown(rtlQueue)}},
	{route: "GET /metrics", name: "metrics", path: fixed("metrics"), shows: []string{"crm.SyncCustomer"}},
	{route: "GET /batches", name: "batches", path: fixed("batches"), shows: []string{"customers " + evil, "waiting " + arabicQueue}},
	{route: "GET /batches/{id}", name: "batch-run", path: func(h *hostile) string { return "batches/" + h.batchRun }, shows: []string{"customers " + evil + " " + shown(rtlQueue)}},
	{route: "GET /batches/{id}", name: "batch-waiting", path: func(h *hostile) string { return "batches/" + h.batchNew }, shows: []string{"waiting " + arabicQueue}},
	{route: "GET /workflows", name: "workflows", path: fixed("workflows"), shows: []string{"Workflow ID"}},
	{route: "GET /workflows/{id}", name: "workflow-running", path: func(h *hostile) string { return "workflows/" + pe(h.wfRun) }, shows: []string{"order " + evil + " " + shown(rtlQueue), "running", "+9 more", "evil." + evil + "⟨U+202E⟩gnp.exe", "Cancel workflow"}},
	{route: "GET /workflows/{id}", name: "workflow-failed", path: func(h *hostile) string { return "workflows/" + pe(h.wfDone) }, shows: []string{wfDoneID, "1 failed", "1 succeeded", "1 dropped", "card issuer", "Retry from the failed steps"}},
	{route: "GET /workflows/{id}", name: "workflow-missing", path: fixed("workflows/" + pe("<script>alert(3)</script>")), shows: []string{"No workflow <script>alert(3)</script>"}},
	{route: "GET /tasks/{id}", name: "task", path: func(h *hostile) string { return "tasks/" + h.task }, shows: []string{"Retry the failed jobs of " + longQueue}},
	{route: "GET /dispatch", name: "dispatch", path: fixed("dispatch"), shows: []string{"crm.SyncCustomer"}},
	{route: "GET /dispatch", name: "dispatch-form", path: fixed("dispatch?job=crm.SyncCustomer"), shows: []string{"Dispatch crm.SyncCustomer"}},
	{route: "GET /schedule", name: "schedule", path: fixed("schedule"), shows: []string{"nightly " + evil, "sync " + shown(rtlQueue), escapedQueue}},
}

// notPages are GET routes that serve no page.
var notPages = map[string]string{"GET /static/": "the stylesheet, script and icon"}

// getRoutes reads the GET routes the dashboard registers from its source.
func getRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../*.go")
	require.NoError(t, err)
	re := regexp.MustCompile(`\.Handle(?:Func)?\("(GET [^"]+)"`)
	var routes []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			routes = append(routes, m[1])
		}
	}
	require.NotEmpty(t, routes)
	sort.Strings(routes)
	return slices.Compact(routes)
}

// Every GET route of the dashboard is in the sweep.
func TestSweepCoversEveryRoute(t *testing.T) {
	for _, r := range getRoutes(t) {
		if _, ok := notPages[r]; ok {
			continue
		}
		require.True(t, slices.ContainsFunc(sweepPages, func(p sweepPage) bool { return p.route == r }),
			"route %q is not in sweepPages: add a line for it", r)
	}
}

// pageProblems is a JavaScript function of the page in view that lists
// what is wrong with it: script or elements injected, anything past the
// window's right edge outside the boxes meant to scroll, cards or tabs
// overlapping, table cells squeezed narrow, tags broken over lines or
// cut short, and bidirectional controls left hidden in the text.
const pageProblems = `(function () {
	var out = [];
	var vw = document.documentElement.clientWidth;
	function describe(e) {
		var s = e.tagName.toLowerCase();
		if (e.id) s += "#" + e.id;
		if (e.className && typeof e.className === "string") s += "." + e.className.trim().split(/\s+/).join(".");
		return s + " (" + (e.textContent || "").trim().slice(0, 40) + ")";
	}
	var scripts = document.querySelectorAll("script");
	for (var i = 0; i < scripts.length; i++) {
		if (!/static\/live\.js$/.test(scripts[i].getAttribute("src") || "")) out.push("injected script " + scripts[i].outerHTML.slice(0, 80));
	}
	var foreign = document.querySelectorAll("img:not([src^='static/']):not([src*='/static/']), iframe, object, embed, frame, base, form[action^='http'], a[href^='javascript'], meta[http-equiv]:not([http-equiv=refresh])");
	for (var i = 0; i < foreign.length; i++) out.push("injected element " + foreign[i].outerHTML.slice(0, 80));
	var all = document.querySelectorAll("*");
	for (var i = 0; i < all.length; i++) {
		for (var j = 0; j < all[i].attributes.length; j++) {
			if (/^on/i.test(all[i].attributes[j].name)) out.push("event handler " + all[i].attributes[j].name + " on " + describe(all[i]));
		}
	}
	if (document.documentElement.scrollWidth > vw + 1) {
		out.push("the page is " + document.documentElement.scrollWidth + "px wide in a " + vw + "px window");
	}
	var wide = 0;
	var els = document.body.querySelectorAll("*");
	for (var i = 0; i < els.length && wide < 5; i++) {
		var e = els[i];
		if (e.parentElement && e.parentElement.closest(".scroll, pre")) continue;
		var r = e.getBoundingClientRect();
		if (!r.width || (r.right <= vw + 1 && r.left >= -1)) continue;
		var clipped = false;
		for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
			if (getComputedStyle(p).overflowX !== "visible") {
				var pr = p.getBoundingClientRect();
				if (pr.right <= vw + 1 && pr.left >= -1) { clipped = true; break; }
			}
		}
		if (!clipped) { wide++; out.push(describe(e) + " spans " + Math.round(r.left) + " to " + Math.round(r.right) + "px in a " + vw + "px window"); }
	}
	var groups = [".card", ".chart-box", ".top nav a", ".tabs a", ".actions > *", ".facts dd", ".filters label", ".bulk > *", ".limits-form > *"];
	for (var g = 0; g < groups.length; g++) {
		var gs = document.querySelectorAll(groups[g]);
		for (var i = 0; i < gs.length; i++) {
			for (var j = i + 1; j < gs.length; j++) {
				var a = gs[i].getBoundingClientRect(), b = gs[j].getBoundingClientRect();
				if (a.width && b.width && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
					out.push(groups[g] + " " + describe(gs[i]) + " overlaps " + describe(gs[j]));
				}
			}
		}
	}
	var cells = document.querySelectorAll("td, th");
	for (var i = 0; i < cells.length; i++) {
		var c = cells[i], r = c.getBoundingClientRect(), text = c.innerText.trim();
		var lh = parseFloat(getComputedStyle(c).lineHeight) || 20;
		var longest = text.split(/\s+/).reduce(function (m, w) { return Math.max(m, w.length); }, 0);
		if (r.width && r.width < 64 && longest > 6 && r.height > 3 * lh) {
			out.push("cell " + describe(c) + " squeezed to " + Math.round(r.width) + "x" + Math.round(r.height) + "px");
		}
	}
	for (var i = 0; i < cells.length; i++) {
		// The height of the cell's text, not of its row.
		var c = cells[i], words = c.innerText.trim().split(/\s+/);
		if (c.querySelector(".tag, pre") || words.length > 2 || words[0].length < 20) continue;
		var range = document.createRange();
		range.selectNodeContents(c);
		var r = range.getBoundingClientRect(), lh = parseFloat(getComputedStyle(c).lineHeight) || 20;
		if (r.width && r.height > 4 * lh) {
			out.push("cell " + describe(c) + " breaks a name over " + Math.round(r.height / lh) + " lines");
		}
	}
	// A table wider than its box scrolls; its first column leaves room
	// for the next ones to show.
	var boxes = document.querySelectorAll(".scroll");
	for (var i = 0; i < boxes.length; i++) {
		var b = boxes[i], th = b.querySelector("thead th");
		if (!th || b.scrollWidth <= b.clientWidth + 1) continue;
		var w = th.getBoundingClientRect().width;
		if (w > 0.6 * b.clientWidth) out.push("the first column of " + describe(th) + " takes " + Math.round(w) + " of " + b.clientWidth + "px");
	}
	var tables = document.querySelectorAll("main table:not(.grid-table)");
	for (var i = 0; i < tables.length; i++) out.push("table " + describe(tables[i]) + " lacks the dashboard's table style (grid-table)");
	var tags = document.querySelectorAll(".tag");
	for (var i = 0; i < tags.length; i++) {
		var t = tags[i], r = t.getBoundingClientRect();
		if (!r.width) continue;
		var lh = parseFloat(getComputedStyle(t).lineHeight) || 16;
		var box = t.closest("td, dd");
		if (box) {
			var br = box.getBoundingClientRect(), pad = parseFloat(getComputedStyle(box).paddingRight) || 0;
			if (r.right > br.right - pad + 1) out.push("tag " + t.textContent + " runs past its cell by " + Math.round(r.right - br.right + pad) + "px");
		}
		if (parseInt(getComputedStyle(t).fontWeight, 10) > 500) out.push("tag " + t.textContent + " is drawn bold");
		// On a job's page a long tag wraps (its facts are not a table), but
		// not a character a line.
		if (t.closest(".facts")) { if (r.height > 1.6 * lh + 4 && r.width < 160) out.push("tag " + t.textContent + " squeezed to " + Math.round(r.width) + "x" + Math.round(r.height) + "px"); continue; }
		if (r.height > 1.6 * lh + 4) out.push("tag " + t.textContent + " breaks over lines: " + Math.round(r.width) + "x" + Math.round(r.height) + "px");
		else if (t.scrollWidth > t.clientWidth + 1 && r.width < 200) out.push("tag " + t.textContent + " cut to " + Math.round(r.width) + "px");
	}
	var bidi = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;
	if (bidi.test(document.body.innerText)) {
		var m = document.body.innerText.match(new RegExp(".{0,20}" + bidi.source + ".{0,20}"));
		out.push("a hidden bidirectional control in the text: " + JSON.stringify(m && m[0]));
	}
	var h1 = document.querySelector("h1");
	if (h1 && /^Error/.test(h1.textContent.trim())) out.push("an error page: " + document.querySelector("main").innerText.slice(0, 200));
	return out;
})()`

// sweepSizes are the window sizes of the sweep.
var sweepSizes = []struct {
	name          string
	width, height int64
	mobile        bool
}{{"1280", 1280, 800, false}, {"390", 390, 844, true}}

// Every page, with hostile, long, right-to-left and escaped names and
// tags of 30 characters, at 1280 and 390 px: no dialog, no injected
// element, nothing past the window's edge outside the boxes that scroll,
// no squeezed cell or broken tag, controls shown, and a full-page
// screenshot of each.
func TestEveryPageWithHostileData(t *testing.T) {
	ctx := startBrowser(t)
	h := fillHostile(t)
	h.addFillers(t, 5)
	shot := newShots(t)
	dialogs := watchDialogs(t, ctx)
	for _, size := range sweepSizes {
		var vp chromedp.Action[chromedp.Void] = chromedp.EmulateViewport(size.width, size.height)
		if size.mobile {
			vp = chromedp.EmulateViewport(size.width, size.height, chromedp.EmulateMobile)
		}
		require.NoError(t, chromedp.Do(ctx, vp))
		for _, p := range sweepPages {
			name := p.name + "-" + size.name
			path := p.path(h)
			if p.download {
				checkDownload(t, ctx, h, path)
				continue
			}
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url+path)), name)
			// Live pages are checked after a refresh swapped their parts in.
			until(t, ctx, `document.readyState === "complete" && (document.body.getAttribute("data-refresh") === "0" || document.documentElement.hasAttribute("data-refreshed"))`)
			text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			require.NoError(t, err)
			for _, s := range p.shows {
				if !strings.Contains(text, s) {
					t.Errorf("%s (%s) does not show %q", name, path, s)
				}
			}
			problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](pageProblems))
			require.NoError(t, err)
			for _, pr := range problems {
				t.Errorf("%s (%s): %s", name, path, pr)
			}
			shot.full(ctx, "sweep-"+name)
		}
	}
	require.Zero(t, dialogs.Load())

	// The checks find what they look for: a page spoilt on purpose.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url+"queues/"+pe(escapedQueue))))
	until(t, ctx, `document.readyState === "complete" && !!document.querySelector("table.jobs .tag")`)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function () {
		document.querySelector("main").insertAdjacentHTML("beforeend",
			'<img src="x"><div id="wide">wide</div><p>hidden \u202E override</p><table><tr><td>bare</td></tr></table>');
		document.getElementById("wide").style.width = "2000px"; // the CSP refuses a style attribute, not the CSSOM
		document.querySelector("table.jobs .tag").style.fontWeight = "700";
		return true;
	})()`))
	require.NoError(t, err)
	problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](pageProblems))
	require.NoError(t, err)
	all := strings.Join(problems, "\n")
	for _, want := range []string{"injected element <img", "div#wide (wide) spans", "px wide in a", "hidden bidirectional control", "lacks the dashboard's table style", "is drawn bold"} {
		require.Contains(t, all, want)
	}
}

// checkDownload fetches path from a page of the dashboard, as its link
// does, and checks that a file is served.
func checkDownload(t *testing.T, ctx context.Context, h *hostile, path string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url+"workers")))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`fetch(%q).then(r => r.text().then(b => r.status + " " + (r.headers.get("Content-Disposition") || "") + " " + b.length))`, h.url+path), chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Regexp(t, `^200 attachment.* [1-9][0-9]*$`, got, path)
}

// full saves a screenshot of the whole page, not only the window.
func (s shots) full(ctx context.Context, name string) {
	s.t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(s.t, err)
	path := filepath.Join(s.dir, name+".png")
	require.NoError(s.t, os.WriteFile(path, buf, 0o644))
}
