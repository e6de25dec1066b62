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

// tenantJob waits in its tenant's fair group.
type tenantJob struct {
	Tenant string
}

func (tenantJob) JobName() string { return "test.Tenant" }
func (j tenantJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "fair", Tags: []string{"tenant:" + j.Tenant}}
}
func (j tenantJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }
func (j tenantJob) JobGroup() string           { return j.Tenant }

// Jobs waiting in fair groups are listed on the Ready tab, with their
// group, give the overview its wait, are found by search, and can be
// cancelled from their page.
func TestJobsWaitingInGroupsAreListed(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Logger: quiet, PageSize: 2})
	var ids []string
	for _, tenant := range []string{"acme", "globex", "acme"} {
		id, err := runtime.Dispatch(b.ctx, tenantJob{Tenant: tenant})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "fair")
	require.NoError(t, err)
	require.EqualValues(t, 3, s.Ready, "the Ready tab counts them")

	var listed string
	for _, page := range []string{"1", "2"} {
		status, body, _ := b.get(t, "queues/fair?state=ready&page="+page)
		require.Equal(t, http.StatusOK, status)
		require.NotContains(t, body, "No ready job.")
		listed += body
	}
	for _, id := range ids {
		require.Contains(t, listed, "jobs/"+id+"?queue=fair", "job %s is listed", id)
	}
	require.Contains(t, listed, "in group <bdi>globex</bdi>")

	_, body, _ := b.get(t, "")
	row := body[strings.Index(body, `href="./queues/fair"`):]
	row = row[:strings.Index(row, "</tr>")]
	cells := regexp.MustCompile(`<td class="n">(?:<time[^>]*>)?([^<]*)(?:</time>)?</td>`).FindAllStringSubmatch(row, -1)
	require.NotEmpty(t, cells)
	require.NotEqual(t, "–", cells[len(cells)-1][1], "the overview shows the grouped jobs' wait")

	found := ""
	for _, page := range []string{"1", "2"} {
		_, body, _ = b.get(t, "search?tag=tenant:&page="+page)
		found += body
	}
	for _, id := range ids {
		require.Contains(t, found, "jobs/"+id+"?queue=fair", "search finds job %s", id)
	}

	res := b.post(t, "jobs/"+ids[1]+"/cancel", url.Values{"queue": {"fair"}, "attempt": {"0"}, "confirm": {"yes"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	f, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "fair", ids[1])
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, f.Cancelled)
}
