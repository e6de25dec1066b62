package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

var (
	nextQueues = regexp.MustCompile(`<a href="([^"]*)" rel="next" class="queues-next">`)
	queueLink  = regexp.MustCompile(`href="([^"]*queues/[^"]*)"`)
	batchLink  = regexp.MustCompile(`href="([^"]*batches/[^"?]+)"`)
)

// windows follows a page's "next queues" links from path, and returns
// each window's body.
func (b bundle) windows(t *testing.T, path string) []string {
	t.Helper()
	var bodies []string
	at, err := url.Parse(b.url(path))
	require.NoError(t, err)
	for range 20 {
		status, body, _ := b.get(t, strings.TrimPrefix(at.RequestURI(), "/admin/queues/"))
		require.Equal(t, http.StatusOK, status, at.String())
		bodies = append(bodies, body)
		m := nextQueues.FindStringSubmatch(body)
		if m == nil {
			return bodies
		}
		next, err := url.Parse(html.UnescapeString(m[1]))
		require.NoError(t, err)
		at = at.ResolveReference(next)
	}
	t.Fatalf("%s: more than 20 windows", path)
	return nil
}

// linked returns the targets of the links of body that match re, path
// unescaped once, after the dashboard's mount and the given segment.
func linked(t *testing.T, re *regexp.Regexp, seg, body string) []string {
	t.Helper()
	var out []string
	base, _ := url.Parse("http://x/admin/queues/")
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		u, err := url.Parse(html.UnescapeString(m[1]))
		require.NoError(t, err)
		p := base.ResolveReference(u).EscapedPath()
		rest, ok := strings.CutPrefix(p, "/admin/queues/"+seg+"/")
		if !ok || strings.Contains(rest, "/") {
			continue
		}
		name, err := url.PathUnescape(rest)
		require.NoError(t, err)
		out = append(out, name)
	}
	return out
}

// With more queues than a page reads, the overview, the failed list,
// the search, the metrics and the look for older batches read a window
// of them and link to the next: following the links reads every queue
// once, the hostile names escaped once, and the overview's cards add
// up the window they name.
func TestPagesAcrossQueuesReadThemInWindows(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Logger: quiet})
	const n = 23
	queues := make([]string, n)
	for i := range queues {
		queues[i] = fmt.Sprintf("%02d %s", i, hostileQueue)
	}
	// One failed job a queue, then one ready job and one batch the
	// index forgets.
	for _, q := range queues {
		_, err := runtime.Dispatch(b.ctx, placed{Q: q, Text: "fail"})
		require.NoError(t, err)
	}
	r := runtime.NewRouter()
	runtime.Register(r, "test.Placed", func(ctx context.Context, p placed) error { return errors.New("failed on purpose") })
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: queues, StopWhenEmpty: true, Tries: 1,
		Sleep: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t)})
	defer rdb.Close()
	batches := map[string]string{} // batch → queue
	for _, q := range queues {
		_, err := runtime.Dispatch(b.ctx, placed{Q: q, Text: "ready"})
		require.NoError(t, err)
		id, err := runtime.NewBatch(placed{Q: q, Text: "in a batch"}).Dispatch(b.ctx)
		require.NoError(t, err)
		batches[id] = q
		require.NoError(t, rdb.ZRem(b.ctx, b.engine.Config().Prefix+":batches", id).Err())
	}

	// seen checks that the windows of a page name each queue in one
	// window, and returns the number of windows.
	seen := func(path string, per int, each func(i int, body string) []string) []string {
		t.Helper()
		bodies := b.windows(t, path)
		require.Len(t, bodies, (n+per-1)/per, path)
		in := map[string]int{}
		for i, body := range bodies {
			for _, q := range each(i, body) {
				if w, ok := in[q]; ok {
					require.Equal(t, i, w, "%s: queue %q in windows %d and %d", path, q, w, i)
				}
				in[q] = i
			}
			from, to := i*per+1, min((i+1)*per, n)
			require.Contains(t, body, fmt.Sprintf("queues %d–%d of %d", from, to, n), path)
			for _, q := range queues[from-1 : to] {
				require.Contains(t, in, q, "%s: window %d lacks %q", path, i, q)
			}
		}
		require.Len(t, in, n, path)
		return bodies
	}

	bodies := seen("", 10, func(i int, body string) []string {
		ready := regexp.MustCompile(`id="total-ready">(\d+)<`).FindStringSubmatch(body)
		require.NotNil(t, ready)
		require.Equal(t, fmt.Sprint(min(10, n-i*10)*2), ready[1], "the cards add up the window's queues: a ready job and a batch's")
		return linked(t, queueLink, "queues", body)
	})
	require.NotContains(t, bodies[0], "queues before</a>", "the first window links to none before")
	require.Contains(t, bodies[1], `rel="prev" class="queues-prev"`)

	seen("failed", 10, func(i int, body string) []string {
		require.Contains(t, body, fmt.Sprintf("%d failed jobs in queues", min(10, n-i*10)))
		return linked(t, queueLink, "queues", body)
	})
	// The links keep the filters, escaped once: every tag holds this.
	hostileTag := url.QueryEscape("y?a&b=1+2%41;")
	seen("failed?name=Placed&tag="+hostileTag, 10, func(i int, body string) []string {
		require.Contains(t, body, fmt.Sprintf("%d failed jobs match (among the newest of each queue) in queues", min(10, n-i*10)))
		return linked(t, queueLink, "queues", body)
	})
	seen("search?name=Placed&tag="+hostileTag, 5, func(i int, body string) []string {
		got := linked(t, queueLink, "queues", body)
		require.Len(t, got, 3*min(5, n-i*5), "a ready, a batch's and a failed job a queue")
		return got
	})
	metrics := b.windows(t, "metrics")
	require.Len(t, metrics, 2)
	require.Contains(t, metrics[0], "Queues 1–20 of 23")
	require.Contains(t, metrics[1], "Queues 21–23 of 23")
	seen("batches?older=1", 3, func(i int, body string) []string {
		var in []string
		for _, id := range linked(t, batchLink, "batches", body) {
			require.Contains(t, batches, id)
			in = append(in, batches[id])
		}
		return in
	})
}

// The overview's idle refresh is a 304 across a minute: its charts'
// axis says how long ago they begin, not at what time.
func TestIdleOverviewRefreshIsNotModifiedAcrossAMinute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	_, err = runtime.Dispatch(runtime.WithDispatcher(ctx, e), placed{Q: hostileQueue, Text: "waits"})
	require.NoError(t, err)
	h := dashboard.New(e, dashboard.Options{Logger: quiet})
	at := time.Now().Truncate(time.Minute).Add(59 * time.Second)
	dashboard.SetClock(h, func() time.Time { return at })

	get := func(etag string) *http.Response {
		res, _ := liveOverview(t, h, etag)
		return res
	}
	first := get("")
	require.Equal(t, http.StatusOK, first.StatusCode)
	etag := first.Header.Get("ETag")
	require.NotEmpty(t, etag)
	for _, later := range []time.Duration{2 * time.Second, time.Minute, 15 * time.Minute} {
		at = at.Add(later)
		res := get(etag)
		require.Equal(t, http.StatusNotModified, res.StatusCode, "a refresh at %v, a new minute", at.Format(time.TimeOnly))
	}
	raw, err := io.ReadAll(first.Body)
	require.NoError(t, err)
	axis := regexp.MustCompile(`<div class="axis"><span>([^<]*)</span>`).FindAllStringSubmatch(string(raw), -1)
	require.Len(t, axis, 2)
	require.Equal(t, "60 min ago", axis[0][1])
	require.Equal(t, "24 h ago", axis[1][1])
}

// A chart of quarter hours moves once a quarter hour: an overview whose
// jobs ran more than an hour ago answers a refresh with a 304 across
// the minutes of a quarter hour, and with the page when a quarter hour
// begins.
func TestIdleOverviewDayChartMovesOnceAQuarterHour(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	_, err = runtime.Dispatch(runtime.WithDispatcher(ctx, e), placed{Q: hostileQueue, Text: "runs"})
	require.NoError(t, err)
	r := runtime.NewRouter()
	runtime.Register(r, "test.Placed", func(ctx context.Context, p placed) error { return nil })
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{hostileQueue}, StopWhenEmpty: true, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	counts, err := runtime.NewInspector(e).Metrics(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.NotEmpty(t, counts, "the worker recorded its minute")
	ran := counts[0].Minute

	// The dashboard's clock: two hours on, a minute into a quarter hour.
	h := dashboard.New(e, dashboard.Options{Logger: quiet})
	at := ran.Add(2 * time.Hour).Truncate(15 * time.Minute).Add(time.Minute + 30*time.Second)
	dashboard.SetClock(h, func() time.Time { return at })
	get := func(etag string) (*http.Response, string) { return liveOverview(t, h, etag) }
	first, body := get("")
	require.Equal(t, http.StatusOK, first.StatusCode)
	require.Contains(t, body, "processed 1", "the day chart holds the job")
	etag := first.Header.Get("ETag")
	for range 13 { // to the last minute of the quarter hour
		at = at.Add(time.Minute)
		res, _ := get(etag)
		require.Equal(t, http.StatusNotModified, res.StatusCode, "a refresh at %v", at.Format(time.TimeOnly))
	}
	at = at.Add(time.Minute) // a quarter hour begins: the bars move
	res, _ := get(etag)
	require.Equal(t, http.StatusOK, res.StatusCode, "a refresh at %v", at.Format(time.TimeOnly))
}

// liveOverview sends h the overview's live refresh, with etag as
// If-None-Match unless empty, and returns the response and its body.
func liveOverview(t *testing.T, h http.Handler, etag string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "/", nil)
	require.NoError(t, err)
	req.Host = "127.0.0.1"
	req.Header.Set("X-Dashboard-Live", "1")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), rec.Body.String()
}
