package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// note is a job whose fields are shown on the pages.
type note struct {
	Text string
	tags []string
	enc  bool
}

func (note) JobName() string { return "test.Note" }
func (n note) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "notes", Tags: n.tags, Encrypted: n.enc}
}
func (n note) EncodeJob() ([]byte, error) { return runtime.Encode(n) }

type bundle struct {
	ctx    context.Context
	engine *runtime.Engine
	srv    *httptest.Server
	client *http.Client
	dash   http.Handler // the dashboard, as New made it
}

func setup(t testing.TB, opts dashboard.Options) bundle {
	t.Helper()
	ctx := context.Background()
	ring, err := runtime.NewKeyRing(runtime.Key{ID: "k1", Secret: make([]byte, 32)})
	require.NoError(t, err)
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t), Keys: ring})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	mux := http.NewServeMux()
	dash := dashboard.New(e, opts)
	mux.Handle("/admin/queues/", http.StripPrefix("/admin/queues", dash))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return bundle{ctx: runtime.WithDispatcher(ctx, e), engine: e, srv: srv, client: client, dash: dash}
}

func (b bundle) url(path string) string {
	return b.srv.URL + "/admin/queues/" + strings.TrimPrefix(path, "/")
}

func (b bundle) get(t *testing.T, path string) (int, string, http.Header) {
	t.Helper()
	res, err := b.client.Get(b.url(path))
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body), res.Header
}

// post sends a form as a browser on the dashboard's own origin does.
func (b bundle) post(t *testing.T, path string, form url.Values, origin string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.url(path), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", map[bool]string{true: "same-origin", false: "cross-site"}[origin == b.srv.URL])
	}
	res, err := b.client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	return res
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`

func TestPagesEscapeAndCarryCSP(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	id, err := runtime.Dispatch(b.ctx, note{Text: evil, tags: []string{evil}})
	require.NoError(t, err)
	secret, err := runtime.Dispatch(b.ctx, note{Text: "the secret plaintext", enc: true})
	require.NoError(t, err)

	for _, path := range []string{"", "queues/notes", "jobs/" + id, "search?tag=script", "failed", "workers", "batches", "schedule"} {
		status, body, hdr := b.get(t, path)
		require.Equal(t, http.StatusOK, status, path)
		require.Contains(t, hdr.Get("Content-Security-Policy"), "script-src 'self'", path)
		require.NotContains(t, hdr.Get("Content-Security-Policy"), "unsafe-inline", path)
		require.NotContains(t, body, "<script>alert", path)
		require.NotContains(t, body, "<img src=x", path)
		require.NotContains(t, body, "the secret plaintext", path)
	}
	_, body, _ := b.get(t, "queues/notes")
	require.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;", "the payload and the tag are shown as text")
	require.Contains(t, body, "sealed")
	_, body, _ = b.get(t, "jobs/"+secret)
	require.Contains(t, body, "sealed")
	require.NotContains(t, body, "secret plaintext")
	_, body, _ = b.get(t, "search?tag=script")
	require.Contains(t, body, id)
}

func TestActionsRefuseCrossOriginAndReadOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	_, err := runtime.Dispatch(b.ctx, note{Text: "x"})
	require.NoError(t, err)

	res := b.post(t, "queues/notes/pause", nil, "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	paused, err := runtime.NewInspector(b.engine).QueuePaused(b.ctx, "notes")
	require.NoError(t, err)
	require.False(t, paused, "a cross-site POST changes nothing")

	res = b.post(t, "queues/notes/pause", nil, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "../../queues/notes", res.Header.Get("Location"), "relative, so the prefix stays")
	paused, err = runtime.NewInspector(b.engine).QueuePaused(b.ctx, "notes")
	require.NoError(t, err)
	require.True(t, paused)

	res = b.post(t, "queues/notes/clear", nil, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "clear without confirm asks first")
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "notes")
	require.NoError(t, err)
	require.Equal(t, int64(1), s.Ready)
	res = b.post(t, "queues/notes/clear", url.Values{"confirm": {"yes"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	s, err = runtime.NewInspector(b.engine).Sizes(b.ctx, "notes")
	require.NoError(t, err)
	require.Zero(t, s.Ready)

	ro := setup(t, dashboard.Options{ReadOnly: true})
	res = ro.post(t, "queues/notes/pause", nil, ro.srv.URL)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	_, body, _ := ro.get(t, "queues/notes")
	require.NotContains(t, body, "Pause</button>")
	require.Contains(t, body, "read-only")
}

func TestAuthorize(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Authorize: dashboard.BasicAuth("admin", "pw")})
	status, _, hdr := b.get(t, "")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, hdr.Get("WWW-Authenticate"), "Basic")
	req, err := http.NewRequest(http.MethodGet, b.url(""), nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "pw")
	res, err := b.client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// A failed job is listed with its error as text, retried from the page
// with its attempts reset, and runs again.
func TestRetryFailedFromThePage(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	r := runtime.NewRouter()
	ran := make(chan string, 10)
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error {
		ran <- n.Text
		if n.Text == "fail" {
			return errors.New(evil)
		}
		return nil
	})
	id, err := runtime.Dispatch(b.ctx, note{Text: "fail"})
	require.NoError(t, err)
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	require.Equal(t, "fail", <-ran)

	_, body, _ := b.get(t, "failed")
	require.Contains(t, body, id)
	require.Contains(t, body, "&lt;script&gt;alert(1)")
	require.NotContains(t, body, evil)

	res := b.post(t, "failed/act", url.Values{"one": {"retry " + url.Values{"q": {"notes"}, "id": {id}}.Encode()}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	j, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "notes", id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, runtime.StateReady, j.State)

	w, err = runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	require.Equal(t, "fail", <-ran, "the retried job ran again")
}

// Retry all runs in the background and its page follows its progress
// to the end.
func TestRetryAllShowsProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	for range 1200 {
		e := &runtime.Envelope{Name: "test.Note", Queue: "notes", Body: []byte{0x80}}
		require.NoError(t, b.engine.Push(b.ctx, e))
	}
	batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "notes", 1200, time.Minute)
	require.NoError(t, err)
	var fs []runtime.Failure
	for _, j := range batch.Jobs {
		fs = append(fs, runtime.Failure{Ref: j.Ref, Name: "test.Note", Err: errors.New("boom"), Attempts: 1})
	}
	require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, fs...))

	res := b.post(t, "failed/retry-all", url.Values{"queue": {"notes"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "../tasks/"), loc)
	task := strings.TrimPrefix(loc, "../")
	require.Eventually(t, func() bool {
		_, body, _ := b.get(t, task)
		return strings.Contains(body, "Done in")
	}, 20*time.Second, 20*time.Millisecond)
	_, body, _ := b.get(t, task)
	require.Contains(t, body, "1\u202f200 / 1\u202f200")
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "notes")
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Ready: 1200}, s)
}

// order is a job with fields of several kinds, for the dispatch form.
type order struct {
	Customer string
	Cents    int
	Rush     bool
	Items    []string
}

func (order) JobName() string                { return "shop.Order" }
func (order) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "orders"} }
func (o order) EncodeJob() ([]byte, error)   { return runtime.Encode(o) }

// The dispatch form is built from a registered type's fields, and
// dispatches a job that decodes into that type.
func TestDispatchFromThePage(t *testing.T) {
	t.Parallel()
	r := runtime.NewRouter()
	got := make(chan order, 1)
	runtime.Register(r, "shop.Order", func(ctx context.Context, o order) error { got <- o; return nil })
	b := setup(t, dashboard.Options{Router: r})
	status, body, _ := b.get(t, "dispatch?job=shop.Order")
	require.Equal(t, http.StatusOK, status)
	for _, f := range []string{`name="Customer"`, `type="number" id="f-Cents"`, `type="checkbox" id="f-Rush"`, `<textarea id="f-Items"`} {
		require.Contains(t, body, f)
	}
	res := b.post(t, "dispatch", url.Values{"job": {"shop.Order"}, "Customer": {evil}, "Cents": {"1250"}, "Rush": {"1"}, "Items": {`["tea","cups"]`}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "./jobs/"), res.Header.Get("Location"))
	_, body, _ = b.get(t, strings.TrimPrefix(res.Header.Get("Location"), "./"))
	require.Contains(t, body, "ready")
	require.NotContains(t, body, "<script>alert")

	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"orders"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	require.Equal(t, order{Customer: evil, Cents: 1250, Rush: true, Items: []string{"tea", "cups"}}, <-got)

	ro := setup(t, dashboard.Options{Router: r, ReadOnly: true})
	status, _, _ = ro.get(t, "dispatch")
	require.Equal(t, http.StatusNotFound, status, "no dispatch form in read-only mode")
}

// A queue's jobs come a page at a time, with links between the pages.
func TestQueuePages(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{PageSize: 50})
	var ids []string
	for i := range 120 {
		id, err := runtime.Dispatch(b.ctx, note{Text: fmt.Sprint(i)})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	_, body, _ := b.get(t, "queues/notes?state=ready&page=3")
	require.Equal(t, 20, strings.Count(body, `<td class="name" title="test.Note">test.Note</td>`))
	require.Contains(t, body, "page 3 of 3")
	require.Contains(t, body, ids[100])
	require.NotContains(t, body, ids[99])
	require.Contains(t, body, `href="?page=2&amp;state=ready"`)
	require.NotContains(t, body, `rel="next"`)
}

// A batch's page shows its counts; its failed jobs are retried from it,
// and it is cancelled from it.
func TestBatchActions(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	r := runtime.NewRouter()
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error {
		if n.Text == "bad" {
			return errors.New("bad note")
		}
		return nil
	})
	id, err := runtime.NewBatch(note{Text: "ok"}, note{Text: "bad"}, note{Text: "ok"}).AllowFailures().Dispatch(b.ctx)
	require.NoError(t, err)
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))

	_, body, _ := b.get(t, "batches/"+id)
	require.Contains(t, body, `<dd id="batch-total">3</dd>`)
	require.Contains(t, body, `<dd id="batch-succeeded">2</dd>`)
	require.Contains(t, body, `<dd id="batch-failed">1 (failures allowed)</dd>`)
	_, list, _ := b.get(t, "batches")
	require.Contains(t, list, id, "a batch with a failed job is listed")
	// A batch with nothing waiting or failed is listed too.
	done, err := runtime.NewBatch(note{Text: "ok"}).Name("all <b>done</b>").Dispatch(b.ctx)
	require.NoError(t, err)
	w, err = runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	_, list, _ = b.get(t, "batches")
	require.Contains(t, list, done, "a finished batch is listed")
	require.Contains(t, list, "all &lt;b&gt;done&lt;/b&gt;")
	require.Less(t, strings.Index(list, done), strings.Index(list, id), "newest first")

	res := b.post(t, "batches/"+id+"/retry", nil, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "notes")
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Ready: 1}, s, "the failed job is back")

	res = b.post(t, "batches/"+id+"/cancel", nil, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	st, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, st.CancelledAt.IsZero())
}

// An error is an HTML page with its status, and escapes what it repeats.
func TestErrorPage(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	status, body, hdr := b.get(t, "queues/"+url.PathEscape("bad{queue}"))
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"))
	require.Contains(t, body, "Error 400")
	status, body, _ = b.get(t, "batches/"+url.PathEscape(evil))
	require.Equal(t, http.StatusNotFound, status)
	require.NotContains(t, body, "<script>alert")
}

// TestQueueLinksCarryTheQueueOnce: every link that names a queue in its
// query names it as it is, encoded once, for a queue whose name has a
// colon, a space, a slash and non-ASCII letters in it; and the pages
// they lead to find the job.
func TestQueueLinksCarryTheQueueOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	const q = "mail:high é/x y"
	id, err := runtime.NewPendingDispatch(note{Text: "ready"}).OnQueue(q).Dispatch(b.ctx)
	require.NoError(t, err)
	failedID, err := runtime.NewPendingDispatch(note{Text: "to fail"}).OnQueue(q).Dispatch(b.ctx)
	require.NoError(t, err)
	broker := runtime.NewBroker(b.engine)
	res, err := broker.Reserve(b.ctx, q, 2, time.Minute)
	require.NoError(t, err)
	for _, j := range res.Jobs {
		if j.ID == failedID {
			require.NoError(t, broker.Fail(b.ctx, runtime.Failure{Ref: j.Ref, Name: "test.Note", Err: errors.New("boom"), Attempts: 1}))
		} else {
			require.NoError(t, broker.Release(b.ctx, runtime.ReleaseOpts{}, j.Ref))
		}
	}

	href := regexp.MustCompile(`href="([^"]*\?[^"]*)"`)
	seen := 0
	for _, page := range []string{"", "queues/" + url.PathEscape(q), "failed?queue=" + url.QueryEscape(q), "search?q=" + id} {
		status, body, _ := b.get(t, page)
		require.Equal(t, http.StatusOK, status, page)
		for _, m := range href.FindAllStringSubmatch(body, -1) {
			u, err := url.Parse(html.UnescapeString(m[1]))
			require.NoError(t, err, m[1])
			if !u.Query().Has("queue") {
				continue
			}
			seen++
			require.Equal(t, q, u.Query().Get("queue"), "the link %s on page %q", m[1], page)
			if strings.HasPrefix(u.Path, "jobs/") {
				status, body, _ := b.get(t, u.String())
				require.Equal(t, http.StatusOK, status, u.String())
				require.NotContains(t, body, "Not in any queue", "the link %s on page %q", m[1], page)
			}
		}
	}
	require.GreaterOrEqual(t, seen, 4, "the pages link to the queue's jobs and failed jobs")
}

// TestForeignHostIsRefused: a request whose Host header names another
// site, as a DNS rebinding page sends, is refused, a POST included, and
// changes nothing; loopback names and the hosts of Options.Hosts are
// answered.
func TestForeignHostIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	_, err := runtime.Dispatch(b.ctx, note{Text: "x"})
	require.NoError(t, err)
	do := func(method, host, origin string) int {
		req, err := http.NewRequest(method, b.url("queues/notes/pause"), nil)
		if method == http.MethodGet {
			req, err = http.NewRequest(method, b.url("queues/notes"), nil)
		}
		require.NoError(t, err)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		res, err := b.client.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusMisdirectedRequest, do(http.MethodGet, "rebind.evil.example", ""))
	require.Equal(t, http.StatusMisdirectedRequest, do(http.MethodPost, "rebind.evil.example:80", "http://rebind.evil.example:80"))
	paused, err := runtime.NewInspector(b.engine).QueuePaused(b.ctx, "notes")
	require.NoError(t, err)
	require.False(t, paused, "the refused POST paused nothing")
	for _, host := range []string{"localhost", "LOCALHOST:8080", "127.0.0.1:1", "[::1]:8080"} {
		require.Equal(t, http.StatusOK, do(http.MethodGet, host, ""), host)
	}

	named := setup(t, dashboard.Options{Hosts: []string{"jobs.example.com", "ops.example.com:8443"}, Banner: "Open to anyone <b>"})
	for host, want := range map[string]int{
		"jobs.example.com": 200, "jobs.example.com:443": 200, "ops.example.com:8443": 200,
		"ops.example.com": 421, "ops.example.com:9000": 421, "evil.example.com": 421,
	} {
		req, err := http.NewRequest(http.MethodGet, named.url(""), nil)
		require.NoError(t, err)
		req.Host = host
		res, err := named.client.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		require.Equal(t, want, res.StatusCode, host)
		if want == 200 {
			require.Contains(t, string(body), `<div class="banner" id="banner" role="alert">Open to anyone &lt;b&gt;</div>`)
		}
	}
}
