package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// A waiting job's page has a Cancel button that asks first, and cancels
// only the attempt the page showed.
func TestCancelFromTheJobPage(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	id, err := runtime.Dispatch(b.ctx, note{Text: "x"})
	require.NoError(t, err)

	_, body, _ := b.get(t, "jobs/"+id+"?queue=notes")
	link := fmt.Sprintf(`href="../jobs/%s/cancel?queue=notes&amp;attempt=0"`, id)
	require.Contains(t, body, `id="cancel-job"`)
	require.Contains(t, body, link)

	status, body, _ := b.get(t, "jobs/"+id+"/cancel?queue=notes&attempt=0")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<input type="hidden" name="attempt" value="0">`)
	require.Contains(t, body, `<input type="hidden" name="queue" value="notes">`)
	require.Contains(t, body, "Cancel job</button>")

	form := url.Values{"queue": {"notes"}, "attempt": {"0"}}
	res := b.post(t, "jobs/"+id+"/cancel", form, "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.StatusCode, "cross-site")
	res = b.post(t, "jobs/"+id+"/cancel", form, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "without confirm, it asks first")
	require.Contains(t, res.Header.Get("Location"), "cancel?queue=notes&attempt=0")

	form.Set("confirm", "yes")
	form.Set("attempt", "1")
	res = b.post(t, "jobs/"+id+"/cancel", form, b.srv.URL)
	require.Equal(t, http.StatusConflict, res.StatusCode, "an attempt the job is not at")
	j, _, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "notes", id)
	require.NoError(t, err)
	require.Equal(t, runtime.StateReady, j.State)

	form.Set("attempt", "0")
	res = b.post(t, "jobs/"+id+"/cancel", form, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "../../jobs/"+id+"?queue=notes", res.Header.Get("Location"))
	_, body, _ = b.get(t, "jobs/"+id+"?queue=notes")
	require.Contains(t, body, `id="job-cancelled"`)
	require.NotContains(t, body, `id="cancel-job"`)
	_, body, _ = b.get(t, "failed")
	require.Contains(t, body, `<span class="badge warn">cancelled</span>`)

	res = b.post(t, "jobs/"+id+"/cancel", form, b.srv.URL)
	require.Equal(t, http.StatusConflict, res.StatusCode, "cancelled already")

	ro := setup(t, dashboard.Options{ReadOnly: true})
	id, err = runtime.Dispatch(ro.ctx, note{Text: "y"})
	require.NoError(t, err)
	_, body, _ = ro.get(t, "jobs/"+id+"?queue=notes")
	require.NotContains(t, body, `id="cancel-job"`)
	status, _, _ = ro.get(t, "jobs/"+id+"/cancel?queue=notes&attempt=0")
	require.Equal(t, http.StatusForbidden, status)
	res = ro.post(t, "jobs/"+id+"/cancel", form, ro.srv.URL)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
}

// A running job's page shows its progress, and a failed job's page each
// attempt's error, as text.
func TestJobPageShowsProgressAndAttemptErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	r := runtime.NewRouter()
	reported := make(chan string, 1)
	finish := make(chan struct{})
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error {
		info, _ := runtime.JobInfoFrom(ctx)
		if n.Text == "slow" {
			if err := runtime.Progress(ctx, 40, "<b>half</b>way"); err != nil {
				return err
			}
			reported <- info.ID
			<-finish
			return nil
		}
		return fmt.Errorf("%s attempt %d", evil, info.Attempt)
	})
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, Sleep: 20 * time.Millisecond, Tries: 2, Logger: quiet})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()

	slow, err := runtime.Dispatch(b.ctx, note{Text: "slow"})
	require.NoError(t, err)
	require.Equal(t, slow, <-reported)
	_, body, _ := b.get(t, "jobs/"+slow+"?queue=notes")
	require.Contains(t, body, `<progress max="100" value="40">40%</progress> 40% <bdi>&lt;b&gt;half&lt;/b&gt;way</bdi>`)
	require.Contains(t, body, "attempt 1)")
	require.Contains(t, body, `id="cancel-job"`)
	close(finish)

	failing, err := runtime.Dispatch(b.ctx, note{Text: "fail"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "notes", failing)
		return err == nil && ok && j.State == runtime.StateFailed
	}, 10*time.Second, 10*time.Millisecond)
	_, body, _ = b.get(t, "jobs/"+failing+"?queue=notes")
	require.Contains(t, body, `id="job-errors"`)
	require.NotContains(t, body, evil)
	table := body[strings.Index(body, `id="job-errors"`):]
	for a := 1; a <= 2; a++ {
		require.Contains(t, table, fmt.Sprintf(`<td class="n" data-label="Attempt">%d</td>`, a))
		require.Contains(t, table, fmt.Sprintf("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; attempt %d", a))
	}
}
