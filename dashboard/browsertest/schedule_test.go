package browsertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/manualclock"
	"github.com/jobgen/jobgen/schedule"
)

// The Periodic page: the application's schedule with its next and last
// runs, paused, run now and resumed from the page, on a desktop and a
// phone.
func TestPeriodicJobsInABrowser(t *testing.T) {
	ctx := startBrowser(t)
	s := schedule.New()
	// daily-report falls due twelve hours from now, never during the test.
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	at := fmt.Sprintf("%02d:00", time.Now().In(paris).Add(12*time.Hour).Hour())
	s.Job(buildReport{Month: "daily"}).DailyAt(at).Timezone("Europe/Paris").Name("daily-report").WithoutOverlapping()
	s.Every(5*time.Minute, importRow{Row: -1}).Name("import-sync")
	s.Job(buildReport{Month: "digest"}).Hourly().Name("digest " + evil)
	a := startApp(t, func(o *dashboard.Options) { o.Schedule = s })
	shot := newShots(t)
	dialogs := watchDialogs(t, ctx)

	// One pass of the schedule, as schedule:work would make at the last
	// five-minute mark: import-sync runs.
	mark := time.Now().UTC().Truncate(5 * time.Minute)
	clock := manualclock.New(mark)
	reports, err := s.RunDue(a.ctx, a.engine, schedule.Config{Clock: clock})
	require.NoError(t, err)
	var synced string
	for _, r := range reports {
		if r.Entry == "import-sync" {
			require.Equal(t, schedule.TickDispatched, r.Outcome)
			synced = r.JobID
		}
	}

	// From the overview's navigation to the list of entries.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.url)))
	follow(t, ctx, chromedp.CSS(`.top nav a[href$="schedule"]`))
	until(t, ctx, `document.querySelectorAll("table.schedule tbody tr").length === 3`)
	require.Equal(t, "active", text(t, ctx, "entry-0-state"))
	require.True(t, strings.HasPrefix(text(t, ctx, "entry-0-next"), "in "), text(t, ctx, "entry-0-next"))
	require.Equal(t, "never", text(t, ctx, "entry-0-last"))
	require.True(t, strings.HasSuffix(text(t, ctx, "entry-1-last"), " ago"), text(t, ctx, "entry-1-last"))
	require.Equal(t, synced, text(t, ctx, "entry-1-job"))
	// The entry named with HTML is shown as text and runs nothing.
	name, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#entry-2 td.name").innerText`))
	require.NoError(t, err)
	require.Contains(t, name, "digest "+evil)
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("main script, main img").length`))
	require.NoError(t, err)
	require.Zero(t, injected)
	laidOut(t, ctx)
	shot.save(ctx, "schedule-1280")

	// Pause import-sync: the badge says so, and so does Redis.
	follow(t, ctx, chromedp.ID("entry-1-pause"))
	until(t, ctx, textIs("entry-1-state", "paused"))
	st, err := s.Status(a.ctx, a.engine)
	require.NoError(t, err)
	require.True(t, st[1].Paused)
	// Its next tick is claimed and pushes nothing; the page says why.
	clock.Set(mark.Add(5 * time.Minute))
	reports, err = s.RunDue(a.ctx, a.engine, schedule.Config{Clock: clock})
	require.NoError(t, err)
	require.Equal(t, schedule.TickPaused, reports[1].Outcome)
	until(t, ctx, `(document.getElementById("entry-1-skipped")||{}).textContent && document.getElementById("entry-1-skipped").textContent.includes("skipped: paused")`)

	// Run it now all the same: the note names the new job, which is in
	// the queue.
	follow(t, ctx, chromedp.ID("entry-1-run"))
	until(t, ctx, `(document.getElementById("note")||{}).textContent && document.getElementById("note").textContent.includes("Dispatched import-sync now: job")`)
	ran, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#note a`)))
	require.NoError(t, err)
	ran = strings.TrimSpace(ran)
	require.NotEqual(t, synced, ran)
	require.Equal(t, "paused", text(t, ctx, "entry-1-state"), "run now leaves it paused")
	laidOut(t, ctx)
	shot.save(ctx, "schedule-ran-1280")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"queues/imports")))
	until(t, ctx, fmt.Sprintf(`document.querySelector("table.jobs tbody").textContent.includes(%q) && document.querySelector("table.jobs tbody").textContent.includes(%q)`, ran, synced))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"schedule")))
	until(t, ctx, `document.querySelectorAll("table.schedule tbody tr").length === 3`)

	// daily-report runs without overlapping: a second run now, while the
	// first is queued, is refused, and the note says why.
	follow(t, ctx, chromedp.ID("entry-0-run"))
	until(t, ctx, `(document.getElementById("note")||{}).textContent && document.getElementById("note").textContent.includes("Dispatched daily-report now")`)
	first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#note a`)))
	require.NoError(t, err)
	follow(t, ctx, chromedp.ID("entry-0-run"))
	until(t, ctx, `document.querySelector("#note.bad") && document.getElementById("note").textContent.includes("Could not run daily-report now")`)
	require.Contains(t, text(t, ctx, "note"), "is held by job "+strings.TrimSpace(first))
	laidOut(t, ctx)
	shot.save(ctx, "schedule-refused-1280")

	// Live: a pause from elsewhere (schedule:pause) shows without a
	// reload.
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.stayed = 7`)))
	require.NoError(t, s.PauseEntry(a.ctx, a.engine, "digest "+evil))
	until(t, ctx, textIs("entry-2-state", "paused"))
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.stayed || 0`))
	require.NoError(t, err)
	require.Equal(t, 7, stayed, "the page updated in place")

	// On a phone: one card per entry, nothing overlapping.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload()))
	until(t, ctx, `document.querySelectorAll("table.schedule tbody tr").length === 3`)
	laidOut(t, ctx)
	shot.save(ctx, "schedule-390")

	// Resume from the phone.
	follow(t, ctx, chromedp.ID("entry-1-resume"))
	until(t, ctx, textIs("entry-1-state", "active"))
	st, err = s.Status(a.ctx, a.engine)
	require.NoError(t, err)
	require.False(t, st[1].Paused)
	require.Zero(t, dialogs.Load())
}

// Without the application's schedule, the page says how to pass one.
func TestPeriodicJobsWithoutSchedule(t *testing.T) {
	ctx := startBrowser(t)
	a := startApp(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.url)))
	links, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".top nav").innerText`))
	require.NoError(t, err)
	require.NotContains(t, links, "Periodic")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(a.url+"schedule")))
	until(t, ctx, `document.getElementById("no-schedule") !== null`)
	require.Contains(t, text(t, ctx, "no-schedule"), "dashboard.Options{Schedule: s}")
	laidOut(t, ctx)
	shot := newShots(t)
	shot.save(ctx, "schedule-missing-1280")
}
