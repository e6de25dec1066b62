package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// pageNames are the templates under templates/, each rendered inside
// layout.html.
var pageNames = []string{"overview", "workers", "queue", "failed", "job", "search", "batch", "task", "confirm", "dispatch", "schedule", "error", "completed", "metrics", "redis", "recent", "history", "tags", "workflow"}

var funcs = template.FuncMap{
	"ago":        ago,
	"dur":        duration,
	"when":       when,
	"left":       left,
	"stamp":      stamp,
	"num":        num,
	"pathq":      url.PathEscape,
	"query":      url.QueryEscape,
	"jobref":     jobRef,
	"batchstate": batchState,
	"gist":       errorGist,
	"kb":         kilobytes,
	"batchbadge": batchBadge,
	"add":        func(a, b int) int { return a + b },
	"contains":   func(s, sub string) bool { return strings.Contains(s, sub) },
	"resultArgs": resultArgs,
	"wfstate":    runtime.WorkflowState.Word,
}

func parsePages() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/partials_more.html"))
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t := template.Must(layout.Clone())
		pages[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return pages
}

// view is what every page's template gets.
type view struct {
	Title    string
	Page     string
	Base     string // relative path to the dashboard's root
	App      string
	Banner   string
	ReadOnly bool
	Dispatch bool // the dispatch form is on
	Schedule bool // Options.Schedule is set
	Refresh  int  // ms; 0 for none
	Retry    int  // s: an error page reloads itself after it; 0 for none
	Live     bool // a live refresh (live.js): lists that are not live are left out
	Now      time.Time
	Data     any
}

// render writes page name with data inside the layout. Pages that are
// never live (errors, confirmations) pass still.
func (h *handler) render(w http.ResponseWriter, r *http.Request, name, title string, data any, still bool) {
	h.renderStatus(w, r, http.StatusOK, name, title, data, still)
}

// renderStatus is render with another status than 200.
func (h *handler) renderStatus(w http.ResponseWriter, r *http.Request, status int, name, title string, data any, still bool) {
	v := view{Title: title, Page: name, Base: base(r), App: h.opts.Title, Banner: h.opts.Banner, ReadOnly: h.opts.ReadOnly, Dispatch: h.opts.Router != nil && !h.opts.ReadOnly, Schedule: h.opts.Schedule != nil, Now: h.now(), Data: data, Live: isLive(r)}
	if h.opts.Refresh > 0 && !still {
		v.Refresh = int(h.opts.Refresh.Milliseconds())
	}
	if r.Method == http.MethodGet && (status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout) {
		v.Retry = 5
	}
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	page := showControls(buf.Bytes())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept-Encoding")
	// live.js reads the times on the page against the server's clock.
	w.Header().Set(nowHeader, strconv.FormatInt(v.Now.UnixMilli(), 10))
	zip := len(page) > gzipFrom && acceptsGzip(r)
	if v.Live && status == http.StatusOK {
		// A refresh that finds the page as it was costs a few hundred
		// bytes: live.js sends the ETag of the last one it had.
		sum := sha256.Sum256(relTexts.ReplaceAll(page, []byte("$1$2")))
		etag := hex.EncodeToString(sum[:12])
		if zip {
			etag += "-gz"
		}
		etag = `"` + etag + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if zip {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
		_, _ = zw.Write(page)
		if zw.Close() == nil {
			w.Header().Set("Content-Encoding", "gzip")
			page = z.Bytes()
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(page)
}

// gzipFrom is the size of page, in bytes, from which it is sent gzipped
// to a client that takes it.
const gzipFrom = 1024

// acceptsGzip reports whether r's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0"
		}
	}
	return false
}

// nowHeader is the server's time, unix ms, when it rendered a page.
const nowHeader = "X-Dashboard-Now"

// liveHeader marks the requests of live.js's refreshes.
const liveHeader = "X-Dashboard-Live"

// isLive reports whether r is a live refresh.
func isLive(r *http.Request) bool { return r.Header.Get(liveHeader) == "1" }

// ago says how long before now t was, shortly: "3s", "4m", "2h", "5d",
// in a <time> that carries t, so that live.js moves it on between
// refreshes and the page's ETag does not change with it.
func ago(t time.Time) template.HTML {
	if t.IsZero() {
		return "–"
	}
	return relTime("ago", t, duration(time.Since(t)))
}

// when says when t is from now: "in 3m" or "3m ago".
func when(t time.Time) template.HTML {
	if t.IsZero() {
		return "–"
	}
	d := time.Until(t)
	if d >= 0 {
		return relTime("when", t, "in "+duration(d))
	}
	return relTime("when", t, duration(-d)+" ago")
}

// left says how long until t, shortly, or 0s once it has passed.
func left(t time.Time) template.HTML {
	return relTime("left", t, duration(time.Until(t)))
}

// relTime is text, which says how far t is from now, as a <time> that
// names t (unix ms) and how text reads it: ago, when or left.
func relTime(kind string, t time.Time, text string) template.HTML {
	return template.HTML(`<time data-` + kind + `="` + strconv.FormatInt(t.UnixMilli(), 10) + `">` + template.HTMLEscapeString(text) + `</time>`)
}

// relTexts are the texts of relTime: they change with the clock alone,
// so the ETag leaves them out.
var relTexts = regexp.MustCompile(`(<time data-(?:ago|when|left)="-?\d+">)[^<]*(</time>)`)

// stamp is t as the pages write an instant, in t's own zone.
func stamp(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") }

// duration is d, shortly, in its largest whole unit (two units under an
// hour).
func duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		m, s := int64(d/time.Minute), int64(d%time.Minute/time.Second)
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm %ds", m, s)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd", int64(d/(24*time.Hour)))
	}
}

// num writes n with thin groups of thousands: 12 345.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// triesPrefix is what the worker puts before the error of a job that
// failed for good: "jobgen: job failed after 3 of 3 tries: ", or "...
// on its only try: " (internal/attempt).
var triesPrefix = regexp.MustCompile(`^jobgen: job failed (after \d+ of \d+ tries|on its only try): `)

// errorGist is a failed job's error without the prefix every such error
// begins with, which the list's Attempts column already tells.
func errorGist(s string) string { return triesPrefix.ReplaceAllString(s, "") }

// kilobytes is the size of a string, or a size in bytes, in whole KB,
// rounded up, for num.
func kilobytes(x any) int64 {
	var n int
	switch v := x.(type) {
	case string:
		n = len(v)
	case int:
		n = v
	}
	return int64((n + 1023) / 1024)
}

// jobRef is the form value naming job id of queue in a bulk action.
func jobRef(queue, id string) string {
	return url.Values{"q": {queue}, "id": {id}}.Encode()
}

// pager is the position in a paginated list.
type pager struct {
	Page, Pages int
	Total       int64
	Prev, Next  string // query strings, "" at an end
	What        string // what the list holds: "jobs", "batches"
}

func newPager(r *http.Request, size int, total int64) pager {
	p := pager{Page: pageOf(r), Total: total, What: "jobs"}
	p.Pages = int((total + int64(size) - 1) / int64(size))
	q := r.URL.Query()
	if p.Page > 1 {
		q.Set("page", strconv.Itoa(p.Page-1))
		p.Prev = "?" + q.Encode()
	}
	if p.Page < p.Pages {
		q.Set("page", strconv.Itoa(p.Page+1))
		p.Next = "?" + q.Encode()
	}
	return p
}

// maxPage is the highest page number a request is taken to ask for: a
// larger one (page=9223372036854775807) is read as this, which is past
// the last page of any list, so that its offset, (page-1) times the page
// size, cannot overflow.
const maxPage = math.MaxInt32

// pageOf is the 1-based page a request asks for: 1 when it names none,
// or not a positive whole number; at most maxPage.
func pageOf(r *http.Request) int {
	v := r.URL.Query().Get("page")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-") {
			return maxPage
		}
		return 1
	}
	return int(max(min(n, maxPage), 1))
}

// pastLastPage redirects a request for a page past the last one (of
// total items, size a page) to the last, and reports whether it did.
func pastLastPage(w http.ResponseWriter, r *http.Request, size int, total int64) bool {
	pages := int((total + int64(size) - 1) / int64(size))
	if pageOf(r) <= max(pages, 1) {
		return false
	}
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(max(pages, 1)))
	seeOther(w, "?"+q.Encode())
	return true
}
