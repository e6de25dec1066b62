package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// A batch whose jobs have all run, one failing for good, is not shown as
// running.
func TestBatchWithNothingLeftIsNotRunning(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	r := runtime.NewRouter()
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error {
		if n.Text == "bad" {
			return errors.New("bad note")
		}
		return nil
	})
	id, err := runtime.NewBatch(note{Text: "ok"}, note{Text: "bad"}).AllowFailures().Dispatch(b.ctx)
	require.NoError(t, err)
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Tries: 2, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))

	_, body, _ := b.get(t, "batches/"+id)
	require.Contains(t, body, `<dd id="batch-state"><span class="badge bad">done, some failed</span></dd>`)
	_, list, _ := b.get(t, "batches")
	row := list[strings.Index(list, id):]
	row = row[:strings.Index(row, "</tr>")]
	require.Contains(t, row, "done, some failed")
	require.NotContains(t, row, "running")

	// The failed list shows the error, not the prefix every one has.
	_, body, _ = b.get(t, "failed")
	require.Contains(t, body, `<div class="clip" title="jobgen: job failed after 2 of 2 tries: bad note">bad note</div>`)
}

// Completed opens on a queue that keeps finished jobs, and a finished
// job kept there has a page.
func TestCompletedOpensOnAQueueWithRecords(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	keeper, err := runtime.Open(b.ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{
		Prefix: b.engine.Config().Prefix, KeepFinished: map[string]runtime.FinishedConfig{"notes": {MaxJobs: 10}}})
	require.NoError(t, err)
	defer keeper.Close()
	_, err = runtime.Dispatch(b.ctx, placed{Q: "alpha", Text: "waits"}) // a queue before "notes" by name
	require.NoError(t, err)
	id, err := runtime.Dispatch(b.ctx, note{Text: "done", tags: []string{"kept"}})
	require.NoError(t, err)
	r := runtime.NewRouter()
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error { return nil })
	w, err := runtime.NewWorker(keeper, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))

	_, body, _ := b.get(t, "completed")
	require.Contains(t, body, `<option value="notes" selected>`)
	require.Contains(t, body, id)

	status, body, _ := b.get(t, "jobs/"+id)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="job-finished"`)
	require.Contains(t, body, "kept")
	status, _, _ = b.get(t, "jobs/"+id+"?queue=notes")
	require.Equal(t, http.StatusOK, status)
}

// /static/ serves its files but does not list them.
func TestStaticIsNotListed(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	status, body, _ := b.get(t, "static/")
	require.Equal(t, http.StatusNotFound, status)
	require.NotContains(t, body, "style.css")
	status, _, _ = b.get(t, "static/style.css")
	require.Equal(t, http.StatusOK, status)
}

// A failed job retried from the dashboard keeps its earlier attempts'
// errors: its page lists them while it waits again.
func TestRetryKeepsTheEarlierAttemptsErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	r := runtime.NewRouter()
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error {
		info, _ := runtime.JobInfoFrom(ctx)
		return fmt.Errorf("refused on attempt %d", info.Attempt)
	})
	id, err := runtime.Dispatch(b.ctx, note{Text: "x"})
	require.NoError(t, err)
	w, err := runtime.NewWorker(b.engine, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Tries: 2, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))

	res := b.post(t, "failed/act", url.Values{"one": {"retry id=" + id + "&q=notes"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	_, body, _ := b.get(t, "jobs/"+id+"?queue=notes")
	require.Contains(t, body, `<span class="badge state-ready" id="job-state">ready</span>`)
	require.Contains(t, body, `id="job-errors"`, "the earlier attempts' errors are kept")
	require.Contains(t, body, "refused on attempt 1")
}
