package dashboard_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// The queue page shows a queue's flow limits and sets them through a
// same-origin POST; a read-only dashboard shows them and no form.
func TestQueueLimitsForm(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	in := runtime.NewInspector(b.engine)
	limits := func() runtime.QueueLimit {
		l, err := in.QueueLimits(b.ctx, "notes")
		require.NoError(t, err)
		return l.QueueLimit
	}
	_, body, _ := b.get(t, "queues/notes")
	require.Contains(t, body, `limit <b id="limits-limit">none</b>`)
	require.Contains(t, body, `Set limits</button>`)

	res := b.post(t, "queues/notes/limits", url.Values{"limit": {"5"}}, "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Equal(t, runtime.QueueLimit{}, limits(), "a cross-site POST changes nothing")

	res = b.post(t, "queues/notes/limits", url.Values{"limit": {"5"}, "rate": {"100"}, "per": {"1s"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "../../queues/notes", res.Header.Get("Location"))
	require.Equal(t, runtime.QueueLimit{Concurrency: 5, Rate: 100, Per: time.Second}, limits())
	for i := range 3 {
		_, err := runtime.Dispatch(b.ctx, note{Text: string(rune('a' + i))})
		require.NoError(t, err)
	}
	require.NoError(t, in.SetQueueLimit(b.ctx, "notes", 1))
	for range 2 {
		_, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "notes", 3, time.Minute)
		require.NoError(t, err)
	}
	_, body, _ = b.get(t, "queues/notes")
	require.Contains(t, body, `<span id="limits-running">1</span> running`)
	require.Contains(t, body, `limit <b id="limits-limit">1</b>`)
	require.Contains(t, body, `rate <b id="limits-rate">100 per 1s</b>`)
	require.Contains(t, body, `held back <span id="limits-held">2 by the limit, 0 by the rate</span>`)

	for _, bad := range []url.Values{
		{"limit": {"-1"}},
		{"limit": {"lots"}},
		{"limit": {"2"}, "rate": {"10"}, "per": {"soon"}},
		{"limit": {"2"}, "rate": {"10"}, "per": {"1us"}},
	} {
		res = b.post(t, "queues/notes/limits", bad, b.srv.URL)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "%v", bad)
		require.Equal(t, runtime.QueueLimit{Concurrency: 1, Rate: 100, Per: time.Second}, limits(), "a refused form changes nothing: %v", bad)
	}

	res = b.post(t, "queues/notes/limits", url.Values{"limit": {""}, "rate": {"0"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, runtime.QueueLimit{}, limits(), "empty or 0 removes")

	ro := setup(t, dashboard.Options{ReadOnly: true})
	res = ro.post(t, "queues/notes/limits", url.Values{"limit": {"5"}}, ro.srv.URL)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	_, body, _ = ro.get(t, "queues/notes")
	require.Contains(t, body, `limit <b id="limits-limit">none</b>`)
	require.NotContains(t, body, "Set limits</button>")
}

// The queue page lists a queue's fair groups, a group at its limit
// marked.
func TestQueueGroups(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	var jobs []runtime.Outgoing
	for i := range 3 {
		env := &runtime.Envelope{Name: "app.Job", Queue: "tenants", Body: []byte{byte(i)},
			Headers: map[string]string{runtime.GroupHeader: "acme", runtime.GroupLimitHeader: "1"}}
		jobs = append(jobs, runtime.Outgoing{Envelope: env})
	}
	require.NoError(t, b.engine.PushMany(b.ctx, jobs))
	res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "tenants", 5, time.Minute)
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	_, body, _ := b.get(t, "queues/tenants")
	require.Contains(t, body, `<span id="groups-waiting">2</span> waiting in groups`)
	require.Contains(t, body, `<tr><td class="mono cut" title="acme"><bdi>acme</bdi></td><td class="n">2</td><td class="n">1</td><td><span class="badge warn">at its limit</span></td></tr>`)
	_, body, _ = b.get(t, "queues/notes")
	require.NotContains(t, body, `id="queue-groups"`, "a queue without groups shows none")
}
