package browsertest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// Every action of every page, on the queue "billing: eu/é x" (":", a
// space, "/", "é"), reached by the pages' own links and forms, at 1280
// and 390 px; each is checked by what it did in Redis, not only by the
// page it leads to. The queue page pauses, resumes, limits and clears;
// a job's page cancels it (a ready job and one waiting in a fair group),
// and retries or forgets it once failed; a batch's page retries its
// failed jobs and cancels it; the failed page retries and forgets one,
// retries and forgets the selected, retries all and flushes; the
// dispatch form dispatches onto the queue; the Periodic page pauses,
// resumes and runs an entry of the queue. (A queue's hold is shown, not
// set, by the dashboard: runtime.HoldQueue sets it.)
func TestEveryActionOnAnEscapedQueueName(t *testing.T) {
	for _, size := range sweepSizes {
		t.Run(size.name, func(t *testing.T) {
			ctx := startBrowser(t)
			var vp chromedp.Action[chromedp.Void] = chromedp.EmulateViewport(size.width, size.height)
			if size.mobile {
				vp = chromedp.EmulateViewport(size.width, size.height, chromedp.EmulateMobile)
			}
			require.NoError(t, chromedp.Do(ctx, vp))
			h := fillHostile(t)
			watchDialogs(t, ctx)
			driveEveryAction(t, ctx, h)
		})
	}
}

func driveEveryAction(t *testing.T, ctx context.Context, h *hostile) {
	const q = escapedQueue
	bg := context.Background()
	ins := runtime.NewInspector(h.engine)
	state := func(id string) runtime.JobState {
		t.Helper()
		j, ok, err := ins.FindJob(bg, q, id)
		require.NoError(t, err)
		if !ok {
			return ""
		}
		return j.State
	}
	failed := func(id string) (runtime.FailedJob, bool) {
		t.Helper()
		f, ok, err := ins.Failed().Get(bg, q, id)
		require.NoError(t, err)
		return f, ok
	}
	heading := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("h1")||{}).textContent || ""`))
		require.NoError(t, err)
		return strings.TrimSpace(s)
	}
	confirm := func(what string) {
		t.Helper()
		until(t, ctx, `!!document.getElementById("confirm")`)
		require.Contains(t, heading(), "queue "+q+"?", "the confirmation to %s names the queue", what)
		follow(t, ctx, "#confirm")
	}
	queuePage := `document.querySelector("h1 span") && document.querySelector("h1 span").textContent === ` + jsString(q) + ` && !!document.getElementById("queue-state")`

	// From the overview's link to the queue page.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url)))
	follow(t, ctx, `#queues a[href="./queues/`+url.PathEscape(q)+`"]`)
	until(t, ctx, queuePage)

	// Queue page: pause, resume, limits.
	follow(t, ctx, "#pause")
	until(t, ctx, textIs("queue-state", "paused"))
	paused, err := ins.QueuePaused(bg, q)
	require.NoError(t, err)
	require.True(t, paused, "paused in Redis")
	follow(t, ctx, "#resume")
	until(t, ctx, textIs("queue-state", "running"))
	paused, err = ins.QueuePaused(bg, q)
	require.NoError(t, err)
	require.False(t, paused, "resumed in Redis")
	_, err = chromedp.Run(ctx, chromedp.SetValue(`input[name="limit"]`, "3"))
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.SetValue(`input[name="rate"]`, "5"))
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.SetValue(`input[name="per"]`, "1m"))
	require.NoError(t, err)
	follow(t, ctx, "#set-limits")
	until(t, ctx, textIs("limits-limit", "3"))
	limits, err := ins.QueueLimits(bg, q)
	require.NoError(t, err)
	require.Equal(t, runtime.QueueLimit{Concurrency: 3, Rate: 5, Per: time.Minute}, limits.QueueLimit, "limits in Redis")

	// A ready job and a job waiting in a fair group, each cancelled from
	// its page, reached from the queue page.
	for _, id := range []string{h.ready[q][0], h.grouped[1]} {
		require.Equal(t, runtime.StateReady, state(id))
		follow(t, ctx, `table.jobs a[href*="jobs/`+id+`"]`)
		until(t, ctx, `!!document.getElementById("cancel-job")`)
		follow(t, ctx, "#cancel-job")
		confirm("cancel job " + id)
		until(t, ctx, `!!document.getElementById("job-cancelled")`)
		f, ok := failed(id)
		require.True(t, ok, "job %s is in the failed store", id)
		require.True(t, f.Cancelled)
		require.NotEqual(t, runtime.StateReady, state(id), "job %s left the queue", id)
		follow(t, ctx, `#job a[href^="../queues/"]`)
		until(t, ctx, queuePage)
	}

	// A failed job's page: retry, then (failed again) forget.
	retried := h.ready[q][0]
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url+"jobs/"+retried+"?queue="+url.QueryEscape(q))))
	until(t, ctx, `!!document.getElementById("retry")`)
	follow(t, ctx, "#retry")
	until(t, ctx, textIs("job-state", "ready"))
	_, ok := failed(retried)
	require.False(t, ok, "retried out of the failed store")
	require.Equal(t, runtime.StateReady, state(retried))
	forgotten := h.grouped[1]
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url+"jobs/"+forgotten+"?queue="+url.QueryEscape(q))))
	until(t, ctx, `!!document.getElementById("forget")`)
	follow(t, ctx, "#forget")
	until(t, ctx, `document.getElementById("job-state") && document.getElementById("job-state").textContent.includes("Not in any queue")`)
	_, ok = failed(forgotten)
	require.False(t, ok, "forgotten")
	require.Empty(t, state(forgotten))

	// A batch's page, from the list: retry its failed job, then cancel it.
	st, ok, err := ins.Batches().Find(bg, h.batchRun)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, st.FailedIDs, 1)
	batchFailed := st.FailedIDs[0]
	_, ok = failed(batchFailed)
	require.True(t, ok)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url)))
	follow(t, ctx, `.top nav a[href$="batches"]`)
	follow(t, ctx, `#batches a[href$="batches/`+h.batchRun+`"]`)
	until(t, ctx, `!!document.getElementById("retry-batch")`)
	follow(t, ctx, "#retry-batch")
	until(t, ctx, `!!document.getElementById("batch-state")`)
	_, ok = failed(batchFailed)
	require.False(t, ok, "the batch's failed job left the failed store")
	require.Equal(t, runtime.StateReady, state(batchFailed), "the batch's failed job is back in the queue")
	follow(t, ctx, "#cancel-batch")
	until(t, ctx, `document.getElementById("batch-state").textContent.includes("cancelled")`)
	st, _, err = ins.Batches().Find(bg, h.batchRun)
	require.NoError(t, err)
	require.False(t, st.CancelledAt.IsZero(), "cancelled in Redis")

	// The failed page, from the queue page's tab: retry one, forget one,
	// retry the selected, forget the selected, retry all, flush.
	fail := func() string {
		t.Helper()
		id, err := runtime.Dispatch(h.ctx, sweepJob{Q: q, N: 300})
		require.NoError(t, err)
		_, err = ins.Cancel(bg, q, id, 0)
		require.NoError(t, err)
		return id
	}
	ids := []string{fail(), fail(), fail(), fail(), fail(), fail()}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url+"queues/"+url.PathEscape(q))))
	until(t, ctx, queuePage)
	follow(t, ctx, `#tabs a[href*="failed?queue="]`)
	failedPage := func(n int) {
		t.Helper()
		until(t, ctx, `document.querySelector("h1 span") && document.querySelector("h1 span").textContent === `+jsString(q)+
			fmt.Sprintf(` && document.querySelectorAll("table.failed-jobs tbody tr input[name=job]").length === %d`, n))
	}
	count := func() int64 {
		t.Helper()
		n, err := ins.Failed().Count(bg, q)
		require.NoError(t, err)
		return n
	}
	n0 := int(count())
	failedPage(n0)
	follow(t, ctx, `button[value^="retry id=`+ids[0]+`&"]`)
	failedPage(n0 - 1)
	_, ok = failed(ids[0])
	require.False(t, ok)
	require.Equal(t, runtime.StateReady, state(ids[0]), "retried from its row")
	follow(t, ctx, `button[value^="forget id=`+ids[1]+`&"]`)
	failedPage(n0 - 2)
	_, ok = failed(ids[1])
	require.False(t, ok)
	require.Empty(t, state(ids[1]), "forgotten from its row")
	for _, id := range ids[2:4] {
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`input[name=job][value^="id=`+id+`&"]`)))
	}
	follow(t, ctx, "#retry-selected")
	failedPage(n0 - 4)
	for _, id := range ids[2:4] {
		_, ok = failed(id)
		require.False(t, ok)
		require.Equal(t, runtime.StateReady, state(id), "retried as selected")
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`input[name=job][value^="id=`+ids[4]+`&"]`)))
	follow(t, ctx, "#forget-selected")
	failedPage(n0 - 5)
	_, ok = failed(ids[4])
	require.False(t, ok)
	require.Empty(t, state(ids[4]), "forgotten as selected")
	left, err := ins.Failed().List(bg, q, 0, 100)
	require.NoError(t, err)
	require.Len(t, left, n0-5)
	follow(t, ctx, "#retry-all")
	until(t, ctx, `document.getElementById("task-state") && document.getElementById("task-state").textContent.includes("Done")`)
	require.Contains(t, heading(), "Retry the failed jobs of "+q)
	require.Zero(t, count(), "all retried")
	for _, f := range left {
		require.Equal(t, runtime.StateReady, state(f.ID), "job %s retried", f.ID)
	}
	follow(t, ctx, `#task-state a`)
	failedPage(0)
	fail()
	fail()
	require.NoError(t, chromedp.Do(ctx, chromedp.Reload()))
	failedPage(2)
	follow(t, ctx, `a.button.danger[href*="failed/flush"]`)
	confirm("flush")
	failedPage(0)
	require.Zero(t, count(), "flushed")

	// The dispatch form, onto the queue.
	before, err := ins.Sizes(bg, q)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url)))
	follow(t, ctx, `.top nav a[href$="dispatch"]`)
	_, err = chromedp.Run(ctx, chromedp.SetValue(`select[name="job"]`, "crm.SyncCustomer"))
	require.NoError(t, err)
	follow(t, ctx, `form.filters button`)
	until(t, ctx, `!!document.getElementById("dispatch")`)
	_, err = chromedp.Run(ctx, chromedp.SetValue("#f-N", "7"))
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.SetValue("#f-queue", q))
	require.NoError(t, err)
	follow(t, ctx, "#dispatch")
	until(t, ctx, `!!document.getElementById("job-state")`)
	dispatched, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("h1 span.mono").textContent`))
	require.NoError(t, err)
	require.Equal(t, runtime.StateReady, state(dispatched), "dispatched onto the queue")
	after, err := ins.Sizes(bg, q)
	require.NoError(t, err)
	require.Equal(t, before.Ready+1, after.Ready)
	shownQueue, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#job a[href^="../queues/"]').textContent`))
	require.NoError(t, err)
	require.Equal(t, q, shownQueue)

	// The Periodic page: the entry of the queue paused, resumed, run now.
	entry := -1
	for i, s := range mustStatus(t, h) {
		if s.Queue == q {
			entry = i
		}
	}
	require.GreaterOrEqual(t, entry, 0)
	id := func(what string) string { return fmt.Sprintf("#entry-%d-%s", entry, what) }
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(h.url)))
	follow(t, ctx, `.top nav a[href$="schedule"]`)
	follow(t, ctx, id("pause"))
	until(t, ctx, textIs(id("state")[1:], "paused"))
	require.True(t, mustStatus(t, h)[entry].Paused, "paused in Redis")
	follow(t, ctx, id("resume"))
	until(t, ctx, textIs(id("state")[1:], "active"))
	require.False(t, mustStatus(t, h)[entry].Paused, "resumed in Redis")
	follow(t, ctx, id("run"))
	until(t, ctx, `(document.getElementById("note")||{}).textContent && document.getElementById("note").textContent.includes("now: job")`)
	ran, err := chromedp.Run(ctx, chromedp.Text(`#note a`))
	require.NoError(t, err)
	require.Equal(t, runtime.StateReady, state(strings.TrimSpace(ran)), "run now put a job on the queue")
	// The entry's queue link leads to the queue's page.
	follow(t, ctx, fmt.Sprintf(`#entry-%d a[href*="queues/"]`, entry))
	until(t, ctx, queuePage)

	// Last, the queue page's Clear.
	s, err := ins.Sizes(bg, q)
	require.NoError(t, err)
	require.NotZero(t, s.Ready)
	require.NotZero(t, s.Delayed)
	follow(t, ctx, `a.button.danger[href$="/clear"]`)
	confirm("clear")
	until(t, ctx, queuePage)
	s, err = ins.Sizes(bg, q)
	require.NoError(t, err)
	require.Zero(t, s.Ready, "cleared")
	require.Zero(t, s.Delayed, "cleared")
	for _, other := range sweepQueues[1:] {
		s, err := ins.Sizes(bg, other)
		require.NoError(t, err)
		require.NotZero(t, s.Ready+s.Delayed, "queue %q is left alone", other)
	}
}

// mustStatus returns the schedule's entries as Redis has them.
func mustStatus(t *testing.T, h *hostile) []scheduleStatus {
	t.Helper()
	st, err := h.sched.Status(context.Background(), h.engine)
	require.NoError(t, err)
	out := make([]scheduleStatus, len(st))
	for i, s := range st {
		out[i] = scheduleStatus{Queue: s.Queue, Paused: s.Paused}
	}
	return out
}

type scheduleStatus struct {
	Queue  string
	Paused bool
}
