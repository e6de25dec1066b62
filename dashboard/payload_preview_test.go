package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// A big payload's job page shows a bounded preview, with < as it is,
// and links to the whole payload, which downloads as JSON.
func TestBigPayloadIsPreviewedAndDownloaded(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	big := "<b>" + strings.Repeat("0123456789", 50_000) + "</b>" // 500 KB
	id, err := runtime.Dispatch(b.ctx, note{Text: big})
	require.NoError(t, err)

	status, body, _ := b.get(t, "jobs/"+id+"?queue=notes")
	require.Equal(t, http.StatusOK, status)
	require.Less(t, len(body), 100_000, "the page holds a preview, not the whole payload")
	require.Contains(t, body, `&#34;Text&#34;: &#34;&lt;b&gt;0123456789`, "< shows as <, not \\u003c")
	require.NotContains(t, body, `\u003c`)
	require.Contains(t, body, `id="payload-cut"`)
	link := regexp.MustCompile(`id="payload-cut">[^<]*<a href="\.\./(jobs/[^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, link)

	// A live refresh of the page swaps its facts and leaves the payload.
	req, err := http.NewRequest(http.MethodGet, b.url("jobs/"+id+"?queue=notes"), nil)
	require.NoError(t, err)
	req.Header.Set("X-Dashboard-Live", "1")
	res, err := b.client.Do(req)
	require.NoError(t, err)
	refresh, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Contains(t, string(refresh), `id="job-state"`)
	require.NotContains(t, string(refresh), "0123456789", "a refresh does not send the payload again")

	_, list, _ := b.get(t, "queues/notes")
	require.Less(t, len(list), 20_000, "the queue page holds a short preview")
	require.Contains(t, list, "the job's page has the whole")

	status, whole, hdr := b.get(t, strings.ReplaceAll(link[1], "&amp;", "&"))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, hdr.Get("Content-Disposition"), "attachment")
	var got struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(whole), &got))
	require.Equal(t, big, got.Text)

	sealed, err := runtime.Dispatch(b.ctx, note{Text: "secret", enc: true})
	require.NoError(t, err)
	status, body, _ = b.get(t, "jobs/"+sealed+"/payload?queue=notes")
	require.Equal(t, http.StatusForbidden, status)
	require.NotContains(t, body, "secret")
}
