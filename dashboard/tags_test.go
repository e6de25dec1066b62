package dashboard_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// hostileTag is a tag that needs escaping, in HTML and in a URL, and
// holds a right-to-left override.
const hostileTag = "<b>cust</b> &x=1?é/\u202egpj.exe"

// taggedJob carries hostileTag; its first Fail attempts fail.
type taggedJob struct {
	Q    string
	Fail int
}

func (taggedJob) JobName() string { return "test.Tagged" }
func (j taggedJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: j.Q, Tags: []string{"other", hostileTag}, Tries: 1}
}
func (j taggedJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// The Tags page adds a monitored tag by a form (refused cross-origin and
// read-only), lists it, shows its jobs across queues, ten queues a page,
// with where each is now and links to their pages that name the queue
// once escaped, within the bound of commands, and removes it.
func TestTagsPage(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p", KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxJobs: 100}}})
	form := url.Values{"tag": {hostileTag}}
	require.Equal(t, http.StatusForbidden, o.post(t, "tags/add", form, "https://evil.example").StatusCode)
	_, body, _ := o.get(t, "tags")
	require.Contains(t, body, `id="no-tags"`)
	res := o.post(t, "tags/add", form, o.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "../tags?tag="+url.QueryEscape(hostileTag), res.Header.Get("Location"))

	queues := []string{hostileRTL}
	for i := range 11 {
		queues = append(queues, "q"+strconv.Itoa(i))
	}
	for _, q := range queues {
		for _, fail := range []int{0, 0, 1} {
			_, err := runtime.Dispatch(o.ctx, taggedJob{Q: q, Fail: fail})
			require.NoError(t, err)
		}
	}
	r := runtime.NewRouter()
	runtime.Register(r, "test.Tagged", func(ctx context.Context, j taggedJob) error {
		if j.Fail > 0 {
			return errors.New("declined <i>now</i>")
		}
		return nil
	})
	w, err := runtime.NewWorker(o.engine, r, runtime.WorkerConfig{Queues: queues, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(o.ctx))
	for _, q := range queues {
		_, err := runtime.Dispatch(o.ctx, taggedJob{Q: q})
		require.NoError(t, err)
		_, err = runtime.Dispatch(o.ctx, placed{Q: q, Text: "untagged"})
		require.NoError(t, err)
	}

	page := "tags?tag=" + url.QueryEscape(hostileTag)
	status, body, n := o.counted(t, page)
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.NotContains(t, body, "<b>cust")
	require.Contains(t, body, html.EscapeString("<b>cust</b> &x=1?é/")+"⟨U+202E⟩gpj.exe")
	// 4 jobs of each of the first 10 queues, the newest 25 of them
	require.Equal(t, 25, strings.Count(body, "<tr data-id="))
	for _, state := range []string{"pending", "completed", "failed"} {
		require.Contains(t, body, `<span class="badge state-`+state+`">`+state+`</span>`)
	}
	require.Contains(t, body, "inv⟨U+202E⟩fdp.exe")
	named, links := linksTo(t, mustURL(t, o.url(page)), body, hostileRTL, queues[1:]...)
	require.Positive(t, named)
	tagLinks := 0
	for _, u := range links {
		if strings.HasSuffix(u.Path, "/tags") && u.Query().Get("tag") != "" {
			require.Equal(t, hostileTag, u.Query().Get("tag"), u.String())
			tagLinks++
		}
	}
	require.Positive(t, tagLinks)
	// a job's link opens its page
	for _, u := range links {
		if strings.Contains(u.Path, "/jobs/") && u.Query().Get("queue") == hostileRTL {
			res, err := o.client.Get(u.String())
			require.NoError(t, err)
			_ = res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, u.String())
		}
	}
	nextPage := false
	for _, u := range links {
		nextPage = nextPage || u.Query().Get("from") == "10" && u.Query().Get("tag") == hostileTag
	}
	require.True(t, nextPage, "a link to the next queues, for the tag")
	_, next, _ := o.get(t, page+"&from=10")
	require.Equal(t, 2*4, strings.Count(next, "<tr data-id="), "the 11th and 12th queues on the next page")

	status, _, n = o.counted(t, "tags")
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	_, body, _ = o.get(t, "tags?tag=nope")
	require.Contains(t, body, `id="not-monitored"`)

	require.Equal(t, http.StatusSeeOther, o.post(t, "tags/remove", form, o.srv.URL).StatusCode)
	_, body, _ = o.get(t, "tags")
	require.Contains(t, body, `id="no-tags"`)
	require.Equal(t, http.StatusBadRequest, o.post(t, "tags/add", url.Values{"tag": {""}}, o.srv.URL).StatusCode)
}

// A read-only dashboard lists the monitored tags, offers no form, and
// refuses to add or remove one.
func TestTagsReadOnly(t *testing.T) {
	t.Parallel()
	ro := setup(t, dashboard.Options{ReadOnly: true})
	require.NoError(t, runtime.NewInspector(ro.engine).MonitorTag(ro.ctx, "acme"))
	_, body, _ := ro.get(t, "tags")
	require.Contains(t, body, `<bdi class="tag">acme</bdi>`)
	require.NotContains(t, body, "<form class=\"inline\"")
	require.NotContains(t, body, `id="add-tag"`)
	for _, path := range []string{"tags/add", "tags/remove"} {
		require.Equal(t, http.StatusForbidden, ro.post(t, path, url.Values{"tag": {"acme"}}, ro.srv.URL).StatusCode)
	}
	tags, err := runtime.NewInspector(ro.engine).MonitoredTags(ro.ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"acme"}, tags)
}
