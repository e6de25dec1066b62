package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

var tag = regexp.MustCompile(`<[^>]*>`)

// A right-to-left override in a queue's name or a tag is shown as what
// it is on every page that prints them, confirmations included, while
// the forms still send the name unchanged.
func TestControlCharactersAreShownVisibly(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Logger: quiet})
	const spoof = "invoices\u202efdp.exe"
	const shown = "invoices⟨U+202E⟩fdp.exe"
	id, err := runtime.Dispatch(b.ctx, placed{Q: spoof, Text: "x"})
	require.NoError(t, err)
	qq, qp := url.QueryEscape(spoof), url.PathEscape(spoof)
	for _, path := range []string{
		"", "queues/" + qp, "queues/" + qp + "/clear", "jobs/" + id + "?queue=" + qq,
		"jobs/" + id + "/cancel?queue=" + qq + "&attempt=0", "failed/flush?queue=" + qq,
		"search?queue=" + qq, "search?tag=t:",
	} {
		status, body, _ := b.get(t, path)
		require.Equal(t, http.StatusOK, status, path)
		text := tag.ReplaceAllString(body, "")
		require.NotContains(t, text, "\u202e", "%s prints the override as is", path)
		require.Contains(t, text, shown, path)
	}
	_, body, _ := b.get(t, "queues/"+qp)
	require.Contains(t, body, `title="t:`+shown+`"`, "a tooltip shows the override too")
	require.NotContains(t, body, `title="t:`+spoof+`"`)
	_, body, _ = b.get(t, "failed/flush?queue="+qq)
	require.Contains(t, body, `<input type="hidden" name="queue" value="`+spoof+`">`, "the form sends the name as it is")
	_, body, _ = b.get(t, "queues/"+qp+"/clear")
	require.Contains(t, strings.ReplaceAll(tag.ReplaceAllString(body, ""), "\n", " "), "Delete every pending job of queue "+shown+"?")
}
