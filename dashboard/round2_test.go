package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// withSecret has a field that is never encoded, which the dispatch form
// must not offer.
type withSecret struct {
	Shown  string
	Hidden string `msgpack:"-"`
}

func (withSecret) JobName() string                { return "test.WithSecret" }
func (withSecret) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j withSecret) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func TestSmallerDefects(t *testing.T) {
	t.Parallel()
	r := runtime.NewRouter()
	runtime.Register(r, "test.WithSecret", func(context.Context, withSecret) error { return nil })
	b := setup(t, dashboard.Options{Router: r, PageSize: 2})

	// An unknown job is a 404.
	status, body, _ := b.get(t, "jobs/01NOSUCHJOB")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "01NOSUCHJOB")

	// A page past the last goes to the last.
	status, _, hdr := b.get(t, "failed?page=221")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "?page=1", hdr.Get("Location"))

	// A favicon, from the dashboard's own files.
	_, body, _ = b.get(t, "")
	require.Contains(t, body, `<link rel="icon" href="./static/favicon.svg" type="image/svg+xml">`)
	status, body, hdr = b.get(t, "static/favicon.svg")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, hdr.Get("Content-Type"), "image/svg+xml")
	require.Contains(t, body, "<svg")

	// The dispatch form offers only the fields that are sent.
	_, body, _ = b.get(t, "dispatch?job=test.WithSecret")
	require.Contains(t, body, `name="Shown"`)
	require.NotContains(t, body, `name="Hidden"`)

	// Text from jobs is isolated and cut short, whole on hover.
	_, err := runtime.Dispatch(b.ctx, note{Text: "x"})
	require.NoError(t, err)
	_, body, _ = b.get(t, "queues/notes")
	require.Contains(t, body, `<td class="name" title="test.Note">test.Note</td>`)
	_, css, _ := b.get(t, "static/style.css")
	require.Contains(t, css, "unicode-bidi: isolate")
	require.Contains(t, css, "text-overflow: ellipsis")
}

func TestReadOnlyHasNoConfirmPages(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{ReadOnly: true})
	for _, path := range []string{"queues/notes/clear", "failed/flush?queue=notes"} {
		status, body, hdr := b.get(t, path)
		require.Equal(t, http.StatusForbidden, status, path)
		require.Contains(t, hdr.Get("Content-Type"), "text/html", path)
		require.Contains(t, body, "read-only", path)
		require.NotContains(t, body, "<button", path)
	}
}

// A live refresh leaves the job list out, and costs a few hundred bytes
// when nothing changed.
func TestLiveRefreshSendsNumbersNotPages(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	big := strings.Repeat("p", 900<<10)
	for range 3 {
		_, err := runtime.Dispatch(b.ctx, note{Text: big})
		require.NoError(t, err)
	}
	_, page, _ := b.get(t, "queues/notes")
	require.Greater(t, len(page), 3000, "the page lists the jobs")

	live := func(etag string) (int, int, string) {
		req, err := http.NewRequest(http.MethodGet, b.url("queues/notes"), nil)
		require.NoError(t, err)
		req.Header.Set("X-Dashboard-Live", "1")
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		res, err := b.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		n, err := io.Copy(io.Discard, res.Body)
		require.NoError(t, err)
		return res.StatusCode, int(n), res.Header.Get("ETag")
	}
	// The page's chart is of the last hour, its axis labelled to the
	// minute: a refresh in another minute than the one before finds the
	// page changed, rightly. On a busy machine the two may straddle a
	// minute's turn; then they are made again, and a pair within one
	// minute must find the page as it was.
	var etag string
	for try := 1; ; try++ {
		minute := time.Now().Truncate(time.Minute)
		status, n, tag := live("")
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, tag)
		require.Less(t, n, 20_000, "a refresh leaves the payloads out")
		status, n, _ = live(tag)
		if !time.Now().Truncate(time.Minute).Equal(minute) && try < 5 {
			continue
		}
		require.Equal(t, http.StatusNotModified, status, "a refresh within the minute finds the page as it was")
		require.Zero(t, n)
		etag = tag
		break
	}

	// Something changes: the refresh carries it.
	_, err := runtime.Dispatch(b.ctx, note{Text: "one more"})
	require.NoError(t, err)
	status, _, etag2 := live(etag)
	require.Equal(t, http.StatusOK, status)
	require.NotEqual(t, etag, etag2)
}

// With Redis down, pages say so without its address and reload
// themselves; with Redis frozen, a page answers within about 2 s.
func TestRedisTroubleShows(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+srv.Addr, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	defer e.Close()
	h := httptest.NewServer(dashboard.New(e, dashboard.Options{Logger: quiet}))
	defer h.Close()
	get := func() (int, string, time.Duration) {
		start := time.Now()
		res, err := http.Get(h.URL + "/")
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body), time.Since(start)
	}
	status, _, _ := get()
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, func() string { _, b, _ := get(); return b }(), `id="redis-down"`, "the banner live.js shows")

	require.NoError(t, srv.Signal(syscall.SIGSTOP))
	status, body, took := get()
	require.NoError(t, srv.Signal(syscall.SIGCONT))
	require.Equal(t, http.StatusGatewayTimeout, status)
	require.Less(t, took, 4*time.Second)
	require.Contains(t, body, `<meta http-equiv="refresh" content="5">`)

	srv.Stop()
	status, body, _ = get()
	require.Contains(t, []int{http.StatusBadGateway, http.StatusGatewayTimeout}, status)
	require.Contains(t, body, "Redis could not be reached")
	require.NotContains(t, body, srv.Addr, "no internal address on the page")
	require.NotContains(t, body, "127.0.0.1")
	require.Contains(t, body, `<meta http-equiv="refresh" content="5">`)
}

func TestWrongPasswordsSlowDown(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Authorize: dashboard.BasicAuth("admin", "pw")})
	try := func(pw string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, b.url(""), nil)
		require.NoError(t, err)
		req.SetBasicAuth("admin", pw)
		res, err := b.client.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode, res.Header.Get("Retry-After")
	}
	for i := range 5 {
		status, _ := try("guess")
		require.Equal(t, http.StatusUnauthorized, status, "guess %d", i+1)
	}
	status, _ := try("guess") // the sixth locks the client out
	require.Equal(t, http.StatusUnauthorized, status)
	status, retry := try("pw")
	require.Equal(t, http.StatusTooManyRequests, status, "even the right password waits out the lockout")
	require.Equal(t, "1", retry)
	time.Sleep(1100 * time.Millisecond)
	status, _ = try("pw")
	require.Equal(t, http.StatusOK, status)
}

// Search results and batches come a page at a time; every batch can be
// reached from the list.
func TestSearchAndBatchesArePaged(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{PageSize: 10})
	for i := range 25 {
		_, err := runtime.Dispatch(b.ctx, note{Text: fmt.Sprint(i), tags: []string{"paged"}})
		require.NoError(t, err)
	}
	_, body, _ := b.get(t, "search?tag=paged")
	require.Equal(t, 10, strings.Count(body, `<td class="name" title="test.Note">`))
	require.Contains(t, body, "page 1 of 3")
	_, body, _ = b.get(t, "search?tag=paged&page=3")
	require.Equal(t, 5, strings.Count(body, `<td class="name" title="test.Note">`))
	status, _, hdr := b.get(t, "search?tag=paged&page=9")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "?page=3&tag=paged", hdr.Get("Location"))

	var ids []string
	for range 230 {
		id, err := runtime.NewBatch(note{Text: "b"}).Dispatch(b.ctx)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	seen := map[string]bool{}
	for page := 1; page <= 6; page++ { // 40 a page
		_, body, _ := b.get(t, fmt.Sprintf("batches?page=%d", page))
		require.Contains(t, body, fmt.Sprintf("page %d of 6", page))
		for _, id := range ids {
			if strings.Contains(body, id) {
				seen[id] = true
			}
		}
	}
	require.Len(t, seen, len(ids), "every batch is on a page")
}
