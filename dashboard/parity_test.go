package dashboard_test

import (
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// The pages of dashboard parity (Redis, Recent, History, a job's result
// and timeline) are tested on a redis-server of their own, so that
// INFO commandstats counts their commands and nothing else's.

// maxPageCommands is the most Redis commands any page may cost.
const maxPageCommands = 100

// ownBundle is a dashboard on a redis-server of its own, with a counter
// of the commands it sends.
type ownBundle struct {
	bundle
	rc *redis.Client
}

func setupOwn(t *testing.T, cfg runtime.EngineConfig, serverArgs ...string) ownBundle {
	t.Helper()
	srv := redistest.StartServer(t, serverArgs...)
	ctx := context.Background()
	e, err := runtime.Open(ctx, "redis://"+srv.Addr+"/0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	mux := http.NewServeMux()
	mux.Handle("/admin/queues/", http.StripPrefix("/admin/queues", dashboard.New(e, dashboard.Options{Logger: quiet})))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rc.Close() })
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return ownBundle{bundle: bundle{ctx: runtime.WithDispatcher(ctx, e), engine: e, srv: hs, client: client}, rc: rc}
}

// counted gets path and returns its status, body and the number of
// Redis commands the request cost (CONFIG RESETSTAT, then INFO
// commandstats).
func (o ownBundle) counted(t *testing.T, path string) (int, string, int64) {
	t.Helper()
	require.NoError(t, o.rc.ConfigResetStat(o.ctx).Err())
	status, body, _ := o.get(t, path)
	stats, err := o.rc.Info(o.ctx, "commandstats").Result()
	require.NoError(t, err)
	var n int64
	for _, line := range strings.Split(stats, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name == "cmdstat_config|resetstat" {
			continue
		}
		calls := strings.TrimPrefix(strings.Split(rest, ",")[0], "calls=")
		c, err := strconv.ParseInt(calls, 10, 64)
		require.NoError(t, err, line)
		n += c
	}
	t.Logf("GET %s: %d Redis commands, %d bytes", path, n, len(body))
	return status, body, n
}

// placedResult is a job of any queue whose handler returns a result.
type placedResult struct {
	Q, Text string
	Size    int // bytes of filler in the result
	Fail    int // attempts that fail first
}

func (placedResult) JobName() string { return "test.Result<script>" }
func (p placedResult) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: p.Q, Tags: []string{"t:" + p.Q}}
}
func (p placedResult) EncodeJob() ([]byte, error) { return runtime.Encode(p) }

type answer struct {
	Said   string
	Filler string
}

// runResults runs the jobs of queues until they are all done: attempts
// of a job with Fail fail until that many have.
func runResults(t *testing.T, ctx context.Context, e *runtime.Engine, queues ...string) {
	t.Helper()
	r := runtime.NewRouter()
	runtime.RegisterResult(r, "test.Result<script>", func(ctx context.Context, p placedResult) (answer, error) {
		if info, _ := runtime.JobInfoFrom(ctx); info.Attempt <= p.Fail {
			return answer{}, errors.New("attempt failed: <b>" + strconv.Itoa(info.Attempt) + "</b>")
		}
		return answer{Said: p.Text, Filler: strings.Repeat("x", p.Size)}, nil
	})
	runWhileDue(t, ctx, e, r, runtime.WorkerConfig{Queues: queues, StopWhenEmpty: true, Tries: 3, Backoff: []time.Duration{time.Millisecond}, Sleep: 20 * time.Millisecond, Logger: quiet})
}

// runWhileDue runs a worker of cfg, which stops when its queues are
// empty, and runs one again while a job waits, a few times: on a loaded
// machine a worker may find its queues empty while a job waits out a
// backoff of a millisecond. A job left delayed longer (a backoff of an
// hour) only costs the runs.
func runWhileDue(t *testing.T, ctx context.Context, e *runtime.Engine, r *runtime.Router, cfg runtime.WorkerConfig) {
	t.Helper()
	in := runtime.NewInspector(e)
	for range 5 {
		w, err := runtime.NewWorker(e, r, cfg)
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
		waiting := int64(0)
		for _, q := range cfg.Queues {
			s, err := in.Sizes(ctx, q)
			require.NoError(t, err)
			waiting += s.Ready + s.Delayed
		}
		if waiting == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hostileRTL is a queue name that needs escaping and holds a
// right-to-left override.
const hostileRTL = hostileQueue + "inv\u202efdp.exe"

func TestRedisPageShowsEachServer(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p", AllowEviction: true}, "--maxmemory-policy", "allkeys-lru", "--maxmemory", "64mb")
	_, err := runtime.Dispatch(o.ctx, placed{Q: hostileRTL, Text: "<script>"})
	require.NoError(t, err)
	version, err := o.rc.Info(o.ctx, "server").Result()
	require.NoError(t, err)
	v := version[strings.Index(version, "redis_version:")+len("redis_version:"):]
	v = strings.TrimSpace(v[:strings.Index(v, "\n")])

	status, body, n := o.counted(t, "redis")
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.Equal(t, int64(1), n, "one INFO on the one server")
	require.Contains(t, body, "<dt>Version</dt><dd>"+v+"</dd>")
	require.Contains(t, body, "<dt>Max memory</dt><dd>64.0 MB</dd>")
	require.Contains(t, body, `allkeys-lru <span class="badge bad" id="evicts">may evict jobs</span>`)
	require.Contains(t, body, "<dt>Clients</dt><dd>")
	require.Regexp(t, `<dt>db0</dt><dd class="mono">keys=\d+`, body)
	require.NotContains(t, body, "<script>")
}

func TestRedisPageOnNoEvictionHasNoWarning(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p"}, "--maxmemory-policy", "noeviction")
	_, body, _ := o.get(t, "redis")
	require.Contains(t, body, "<dt>Eviction policy</dt><dd>noeviction</dd>")
	require.NotContains(t, body, `id="evicts"`)
}

// A finished job's page shows its result, escaped, and its timeline
// with each attempt's error; a result over the page's cap is not read
// and is downloaded whole.
func TestJobPageShowsResultAndTimeline(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p", MaxResultSize: 1 << 20, KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxJobs: 100}}})
	small, err := runtime.Dispatch(o.ctx, placedResult{Q: hostileRTL, Text: "<script>alert(1)</script>", Fail: 2})
	require.NoError(t, err)
	big, err := runtime.Dispatch(o.ctx, placedResult{Q: hostileRTL, Text: "big", Size: 200 << 10})
	require.NoError(t, err)
	runResults(t, o.ctx, o.engine, hostileRTL)

	page := "jobs/" + url.PathEscape(small) + "?queue=" + url.QueryEscape(hostileRTL)
	status, body, n := o.counted(t, page)
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.Contains(t, body, `<section id="job-result">`)
	require.Contains(t, body, `&#34;Said&#34;: &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;`)
	require.NotContains(t, body, "<script>alert")
	require.Contains(t, body, "⟨U+202E⟩", "the override is shown, not applied")
	require.Contains(t, body, `<ol class="timeline" id="job-timeline">`)
	tl := body[strings.Index(body, `id="job-timeline"`):]
	tl = tl[:strings.Index(tl, "</ol>")]
	// the record of the finished job kept its earlier attempts' errors
	require.Equal(t, 2, strings.Count(tl, `class="step-error"`), tl)
	require.Contains(t, tl, "attempt failed: &lt;b&gt;1&lt;/b&gt;")
	require.Contains(t, tl, "attempt failed: &lt;b&gt;2&lt;/b&gt;")
	require.NotContains(t, tl, "earlier attempts did not succeed")
	require.Contains(t, tl, `<li class="step-running"><span class="badge state-running">running</span> <span class="muted">attempt 3</span>`)
	require.Contains(t, tl, "succeeded after")

	bigPage := "jobs/" + url.PathEscape(big) + "?queue=" + url.QueryEscape(hostileRTL)
	status, body, n = o.counted(t, bigPage)
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.Less(t, len(body), 64<<10, "the page does not carry the 200 KB result")
	require.Contains(t, body, `id="result-cut"`)
	named, follow := linksTo(t, mustURL(t, o.url(bigPage)), body, hostileRTL)
	require.Positive(t, named)
	var download string
	for _, u := range follow {
		if strings.HasSuffix(u.Path, "/result") {
			download = u.String()
		}
	}
	require.NotEmpty(t, download, "a link downloads the whole result")
	res, err := o.client.Get(download)
	require.NoError(t, err)
	whole, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Disposition"), "attachment")
	require.Contains(t, string(whole), strings.Repeat("x", 200<<10))
}

// A job whose queue keeps no record of finished jobs still shows its
// result while the result is kept.
func TestJobPageShowsAResultWithoutARecord(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p"})
	id, err := runtime.Dispatch(o.ctx, placedResult{Q: hostileRTL, Text: "kept"})
	require.NoError(t, err)
	runResults(t, o.ctx, o.engine, hostileRTL)
	status, body, n := o.counted(t, "jobs/"+url.PathEscape(id)+"?queue="+url.QueryEscape(hostileRTL))
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.Contains(t, body, `&#34;Said&#34;: &#34;kept&#34;`)
}

// A job waiting for its third attempt shows the first two's errors on
// its timeline.
func TestTimelineOfAJobWaitingForARetry(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p"})
	id, err := runtime.Dispatch(o.ctx, placedResult{Q: hostileRTL, Text: "again", Fail: 9})
	require.NoError(t, err)
	r := runtime.NewRouter()
	runtime.RegisterResult(r, "test.Result<script>", func(ctx context.Context, p placedResult) (answer, error) {
		info, _ := runtime.JobInfoFrom(ctx)
		return answer{}, errors.New("no " + strconv.Itoa(info.Attempt))
	})
	runWhileDue(t, o.ctx, o.engine, r, runtime.WorkerConfig{Queues: []string{hostileRTL}, StopWhenEmpty: true, Tries: 5, Backoff: []time.Duration{time.Millisecond, time.Hour}, Sleep: 20 * time.Millisecond, Logger: quiet})
	status, body, n := o.counted(t, "jobs/"+url.PathEscape(id)+"?queue="+url.QueryEscape(hostileRTL))
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	tl := body[strings.Index(body, `id="job-timeline"`):]
	tl = tl[:strings.Index(tl, "</ol>")]
	require.Contains(t, tl, `class="step-dispatched"`)
	require.Contains(t, tl, "no 1")
	require.Contains(t, tl, "no 2")
	require.Contains(t, tl, `class="step-due"`)
	require.Less(t, strings.Index(tl, "no 1"), strings.Index(tl, "no 2"))

	// One that failed for good lists each attempt's error, the last as
	// the failure.
	failed, err := runtime.Dispatch(o.ctx, placedResult{Q: hostileRTL, Text: "never", Fail: 9})
	require.NoError(t, err)
	runResults(t, o.ctx, o.engine, hostileRTL)
	status, body, n = o.counted(t, "jobs/"+url.PathEscape(failed)+"?queue="+url.QueryEscape(hostileRTL))
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	tl = body[strings.Index(body, `id="job-timeline"`):]
	tl = tl[:strings.Index(tl, "</ol>")]
	require.Equal(t, 2, strings.Count(tl, `class="step-error"`), tl)
	require.Contains(t, tl, "attempt failed: &lt;b&gt;1&lt;/b&gt;")
	require.Contains(t, tl, "attempt failed: &lt;b&gt;2&lt;/b&gt;")
	require.Contains(t, tl, `<li class="step-failed"><span class="badge state-failed">failed</span> <span class="muted">attempt 3</span>`)
	require.Contains(t, tl, "attempt failed: &lt;b&gt;3&lt;/b&gt;")
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// linksTo checks that every link and form action of body (the page at
// page) that names a queue, in its path or its query, names queue; it
// returns how many named queue and the links. A link may name one of
// others instead.
func linksTo(t *testing.T, page *url.URL, body, queue string, others ...string) (named int, follow []*url.URL) {
	t.Helper()
	for _, m := range linkAttr.FindAllStringSubmatch(body, -1) {
		u, err := url.Parse(html.UnescapeString(m[2]))
		require.NoError(t, err, m[2])
		u = page.ResolveReference(u)
		segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/admin/queues/"), "/")
		for i, s := range segs {
			if s == "queues" && i+1 < len(segs) {
				q, err := url.PathUnescape(segs[i+1])
				require.NoError(t, err)
				require.Contains(t, append(others, queue), q, "%s names the wrong queue in its path", m[2])
				if q == queue {
					named++
				}
			}
		}
		if q, ok := u.Query()["queue"]; ok && q[0] != "" {
			require.Contains(t, append(others, queue), q[0], "%s names the wrong queue in its query", m[2])
			if q[0] == queue {
				named++
			}
		}
		follow = append(follow, u)
	}
	return named, follow
}

// Recent lists the newest jobs of each kind across queues, ten queues a
// page, whatever the number of jobs, within the bound of commands.
func TestRecentPage(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p", KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxJobs: 100}}})
	queues := []string{hostileRTL}
	for i := range 11 {
		queues = append(queues, "q"+strconv.Itoa(i))
	}
	for _, q := range queues {
		for range 8 {
			_, err := runtime.Dispatch(o.ctx, placedResult{Q: q, Text: "<script>done</script>"})
			require.NoError(t, err)
		}
		for range 6 {
			_, err := runtime.Dispatch(o.ctx, placedResult{Q: q, Text: "no", Fail: 9})
			require.NoError(t, err)
		}
	}
	runResults(t, o.ctx, o.engine, queues...)
	for _, q := range queues {
		for range 8 {
			_, err := runtime.Dispatch(o.ctx, placed{Q: q, Text: "<b>waits</b>"})
			require.NoError(t, err)
		}
	}
	// hostileRTL sorts first: its jobs are on the first page.
	for _, kind := range []string{"completed", "failed", "pending"} {
		page := "recent?kind=" + kind
		status, body, n := o.counted(t, page)
		require.Equal(t, http.StatusOK, status)
		require.LessOrEqual(t, n, int64(maxPageCommands), kind)
		rows := strings.Count(body, "<tr data-id=")
		require.Equal(t, 10*5, rows, "%s: 5 jobs of each of the first 10 queues", kind)
		named, _ := linksTo(t, mustURL(t, o.url(page)), body, hostileRTL, queues[1:]...)
		require.Equal(t, 2*5, named, "%s: each of the 5 jobs of the queue links to its page and its queue", kind)
		require.Contains(t, body, "inv⟨U+202E⟩fdp.exe")
		require.NotContains(t, body, "<script>")
		require.Contains(t, body, `href="?from=10&amp;kind=`+kind+`" rel="next"`)
		_, next, _ := o.get(t, page+"&from=10")
		require.Equal(t, 2*5, strings.Count(next, "<tr data-id="), "%s: the 11th and 12th queues on the next page", kind)
	}
	_, body, _ := o.get(t, "recent?kind=failed")
	require.Contains(t, body, "attempt failed: &lt;b&gt;3&lt;/b&gt;")
}

// History shows a queue's throughput and each job class's runtimes over
// time, within the bound of commands on its longest span.
func TestHistoryPage(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p", KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxJobs: 100}}})
	for range 7 {
		_, err := runtime.Dispatch(o.ctx, placedResult{Q: hostileRTL, Text: "r"})
		require.NoError(t, err)
	}
	for range 3 {
		_, err := runtime.Dispatch(o.ctx, placed{Q: hostileRTL, Text: "p"})
		require.NoError(t, err)
	}
	r := runtime.NewRouter()
	runtime.RegisterResult(r, "test.Result<script>", func(ctx context.Context, p placedResult) (answer, error) { return answer{Said: p.Text}, nil })
	runtime.Register(r, "test.Placed", func(ctx context.Context, p placed) error { return nil })
	w, err := runtime.NewWorker(o.engine, r, runtime.WorkerConfig{Queues: []string{hostileRTL}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(o.ctx))

	for _, span := range []string{"1h", "6h", "12h"} {
		page := "history?queue=" + url.QueryEscape(hostileRTL) + "&span=" + span
		status, body, n := o.counted(t, page)
		require.Equal(t, http.StatusOK, status)
		require.LessOrEqual(t, n, int64(maxPageCommands), span)
		require.Contains(t, body, `<section class="class-history" data-class="test.Placed">`)
		require.Contains(t, body, `<section class="class-history" data-class="test.Result&lt;script&gt;">`)
		require.Contains(t, body, `<bdi>test.Result&lt;script&gt;</bdi> <span class="muted small">7 jobs</span>`)
		require.Contains(t, body, `<bdi>test.Placed</bdi> <span class="muted small">3 jobs</span>`)
		require.Contains(t, body, "processed 10 ", "the queue's chart counts both classes")
		require.Contains(t, body, `<option value="`+html.EscapeString(hostileRTL)[:5])
		require.Contains(t, body, "inv⟨U+202E⟩fdp.exe")
		named, _ := linksTo(t, mustURL(t, o.url(page)), body, hostileRTL)
		require.Positive(t, named)
	}
	_, body, _ := o.get(t, "history?queue=other")
	require.Contains(t, body, `id="no-classes"`)
}
