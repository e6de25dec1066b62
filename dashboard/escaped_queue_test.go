package dashboard_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// hostileQueue needs escaping in a path and in a query, and holds what a
// second escape or a second unescape would change (%41, +).
const hostileQueue = "in:v é/x y?a&b=1+2%41;"

// placed is a job whose queue is given.
type placed struct {
	Q     string
	Text  string
	Delay time.Duration
}

func (placed) JobName() string { return "test.Placed" }
func (p placed) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: p.Q, Delay: p.Delay, Tags: []string{"t:" + p.Q}}
}
func (p placed) EncodeJob() ([]byte, error) { return runtime.Encode(p) }

var (
	linkAttr   = regexp.MustCompile(`(href|action)="([^"]*)"`)
	hiddenAttr = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
	buttonRef  = regexp.MustCompile(`<button name="one" value="(?:retry|forget) ([^"]*)"`)
)

// checkQueueLinks checks every link, form action, hidden field and job
// reference of body (the page at page) that names a queue: it must name
// hostileQueue. It returns the GET links that name it.
func checkQueueLinks(t *testing.T, page *url.URL, body string) (named int, follow []*url.URL) {
	t.Helper()
	check := func(what, raw string) {
		before := named
		u, err := url.Parse(raw)
		require.NoError(t, err, "%s %q on %s", what, raw, page)
		u = page.ResolveReference(u)
		// The dashboard is mounted under /admin/queues/.
		segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/admin/queues/"), "/")
		for i, s := range segs {
			if s == "queues" && i+1 < len(segs) {
				q, err := url.PathUnescape(segs[i+1])
				require.NoError(t, err)
				require.Equal(t, hostileQueue, q, "%s %q on %s names the wrong queue in its path", what, raw, page)
				named++
			}
		}
		if q, ok := u.Query()["queue"]; ok && q[0] != "" {
			require.Equal(t, hostileQueue, q[0], "%s %q on %s names the wrong queue in its query", what, raw, page)
			named++
		}
		if what == "href" && named > before {
			follow = append(follow, u)
		}
	}
	for _, m := range linkAttr.FindAllStringSubmatch(body, -1) {
		check(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range hiddenAttr.FindAllStringSubmatch(body, -1) {
		name, value := m[1], html.UnescapeString(m[2])
		switch name {
		case "queue":
			require.Equal(t, hostileQueue, value, "hidden queue field on %s", page)
			named++
		case "back":
			check("back", value)
		}
	}
	for _, m := range buttonRef.FindAllStringSubmatch(body, -1) {
		v, err := url.ParseQuery(html.UnescapeString(m[1]))
		require.NoError(t, err)
		require.Equal(t, hostileQueue, v.Get("q"), "job reference on %s", page)
		named++
	}
	return named, follow
}

// Every link and form of every page carries a queue name that needs
// escaping to the queue it names, and every page it leads to opens; the
// job page's Cancel then cancels the job.
func TestEveryLinkCarriesAnEscapedQueueName(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Logger: quiet})
	ready, err := runtime.Dispatch(b.ctx, placed{Q: hostileQueue, Text: "ready"})
	require.NoError(t, err)
	_, err = runtime.Dispatch(b.ctx, placed{Q: hostileQueue, Text: "later", Delay: time.Hour})
	require.NoError(t, err)
	failing, err := runtime.Dispatch(b.ctx, placed{Q: hostileQueue, Text: "fail"})
	require.NoError(t, err)

	// A worker fails the job "fail" and leaves the others be.
	r := runtime.NewRouter()
	runtime.Register(r, "test.Placed", func(ctx context.Context, p placed) error {
		return errors.New("failed on purpose")
	})
	ins := runtime.NewInspector(b.engine)
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{hostileQueue}, Sleep: 20 * time.Millisecond, Tries: 1, Logger: quiet})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Eventually(t, func() bool {
		j, ok, err := ins.FindJob(b.ctx, hostileQueue, failing)
		return err == nil && ok && j.State == runtime.StateFailed
	}, 10*time.Second, 10*time.Millisecond)
	stop()
	require.NoError(t, <-done)
	// The worker took "ready" too, first: dispatch another that stays.
	if j, ok, _ := ins.FindJob(b.ctx, hostileQueue, ready); !ok || j.State != runtime.StateReady {
		ready, err = runtime.Dispatch(b.ctx, placed{Q: hostileQueue, Text: "ready"})
		require.NoError(t, err)
	}

	qq, qp := url.QueryEscape(hostileQueue), url.PathEscape(hostileQueue)
	pages := []string{
		"", "workers", "queues/" + qp, "queues/" + qp + "?state=delayed", "queues/" + qp + "?state=reserved",
		"queues/" + qp + "/clear", "failed", "failed?queue=" + qq, "failed/flush?queue=" + qq,
		"jobs/" + ready + "?queue=" + qq, "jobs/" + ready, "jobs/" + failing + "?queue=" + qq,
		"jobs/" + ready + "/cancel?queue=" + qq + "&attempt=0",
		"search?queue=" + qq, "search?tag=t:", "completed?queue=" + qq, "metrics?queue=" + qq, "batches", "schedule",
	}
	seen := map[string]bool{}
	total := 0
	for len(pages) > 0 {
		path := pages[0]
		pages = pages[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		status, body, _ := b.get(t, path)
		require.Equal(t, http.StatusOK, status, "GET %s", path)
		page, err := url.Parse(b.url(path))
		require.NoError(t, err)
		named, follow := checkQueueLinks(t, page, body)
		total += named
		for _, u := range follow {
			if rel, ok := strings.CutPrefix(u.String(), b.url("")); ok && !strings.HasPrefix(rel, "static/") {
				pages = append(pages, rel)
			}
		}
	}
	require.Greater(t, total, 30, "the pages name the queue in their links")

	// The job page's Cancel link leads to a form that cancels the job.
	_, body, _ := b.get(t, "jobs/"+ready+"?queue="+qq)
	m := regexp.MustCompile(`id="cancel-job" href="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, m)
	page, _ := url.Parse(b.url("jobs/" + ready))
	link, err := url.Parse(html.UnescapeString(m[1]))
	require.NoError(t, err)
	confirmURL := page.ResolveReference(link)
	rel := strings.TrimPrefix(confirmURL.String(), b.url(""))
	status, body, _ := b.get(t, rel)
	require.Equal(t, http.StatusOK, status)
	form := url.Values{"confirm": {"yes"}}
	for _, h := range hiddenAttr.FindAllStringSubmatch(body, -1) {
		form.Set(h[1], html.UnescapeString(h[2]))
	}
	action := regexp.MustCompile(`<form method="post" action="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, action)
	au, err := url.Parse(html.UnescapeString(action[1]))
	require.NoError(t, err)
	res := b.post(t, strings.TrimPrefix(confirmURL.ResolveReference(au).String(), b.url("")), form, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	f, ok, err := ins.Failed().Get(b.ctx, hostileQueue, ready)
	require.NoError(t, err)
	require.True(t, ok, "the job was cancelled")
	require.True(t, f.Cancelled)
}
