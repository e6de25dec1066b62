package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/manualclock"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// scheduleBundle is a dashboard given a schedule, and a manual clock to
// run the schedule's ticks with.
type scheduleBundle struct {
	bundle
	s     *schedule.Schedule
	clock *manualclock.Clock
	start time.Time
	// nightly is the hour, in Paris, of the entry "nightly": twelve hours
	// from the test's start, so that its tick never falls in the test.
	nightly int
}

func setupSchedule(t *testing.T, opts dashboard.Options) scheduleBundle {
	t.Helper()
	s := schedule.New()
	s.Job(note{Text: "ping"}).Name("ping")
	s.Every(5*time.Minute, note{Text: "evil"}).Name(evil)
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	nightly := time.Now().In(paris).Add(12 * time.Hour).Hour()
	s.Job(note{Text: "nightly"}).DailyAt(fmt.Sprintf("%02d:00", nightly)).Timezone("Europe/Paris").Name("nightly").WithoutOverlapping()
	opts.Schedule = s
	start := time.Now().UTC().Truncate(5 * time.Minute)
	return scheduleBundle{bundle: setup(t, opts), s: s, clock: manualclock.New(start), start: start, nightly: nightly}
}

// pass runs the schedule's due ticks at start+d, and returns what each
// entry's tick did.
func (b scheduleBundle) pass(t *testing.T, d time.Duration) map[string]schedule.TickReport {
	t.Helper()
	b.clock.Set(b.start.Add(d))
	reports, err := b.s.RunDue(b.ctx, b.engine, schedule.Config{Clock: b.clock})
	require.NoError(t, err)
	out := map[string]schedule.TickReport{}
	for _, r := range reports {
		out[r.Entry] = r
	}
	return out
}

func (b scheduleBundle) ready(t *testing.T) int64 {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, "notes")
	require.NoError(t, err)
	return s.Ready
}

// row returns the table row of entry i on the page.
func row(t *testing.T, body string, i int) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr id="entry-` + string(rune('0'+i)) + `">.*?</tr>`).FindString(body)
	require.NotEmpty(t, m, "row %d", i)
	return m
}

// The page lists each entry with its spec, queue, next run and last
// run, and escapes what the application named.
func TestSchedulePageListsEntries(t *testing.T) {
	t.Parallel()
	b := setupSchedule(t, dashboard.Options{})
	reps := b.pass(t, 0)
	require.Equal(t, schedule.TickDispatched, reps["ping"].Outcome)
	require.Equal(t, schedule.TickDispatched, reps[evil].Outcome)

	_, overview, _ := b.get(t, "")
	require.Contains(t, overview, `href="./schedule">Periodic</a>`)
	status, body, hdr := b.get(t, "schedule")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, hdr.Get("Content-Security-Policy"), "script-src 'self'")
	require.Contains(t, body, `aria-current="page">Periodic</a>`)
	require.Contains(t, body, `id="entry-0-last-cell" data-live`, "runs refresh live")

	ping := row(t, body, 0)
	require.Contains(t, ping, "><bdi>ping</bdi> ")
	require.Contains(t, ping, `<td class="mono" data-label="Spec">* * * * *</td>`)
	require.Contains(t, ping, `href="./queues/notes">notes</a>`)
	require.Regexp(t, `id="entry-0-next"><time data-when="\d+">in `, ping)
	require.Contains(t, ping, `id="entry-0-last">`)
	require.Regexp(t, `id="entry-0-last"><time data-ago="\d+">\d+(ms|s)</time> ago<`, ping)
	require.Contains(t, ping, `href="./jobs/`+reps["ping"].JobID+`?queue=notes" id="entry-0-job">`)
	require.Contains(t, ping, `>active</span>`)
	require.Contains(t, ping, "test.Note", "the job's name, as the entry has a name of its own")

	bad := row(t, body, 1)
	require.Contains(t, bad, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.Contains(t, bad, "@every 5m")
	require.NotContains(t, body, "<script>alert")
	require.NotContains(t, body, "<img src=x")

	nightly := row(t, body, 2)
	require.Contains(t, nightly, fmt.Sprintf("0 %d * * * Europe/Paris", b.nightly))
	require.Regexp(t, fmt.Sprintf(`%02d:00:00 CES?T`, b.nightly), nightly, "the next run in the entry's zone")
	require.Contains(t, nightly, `<span id="entry-2-last">never</span>`)
	require.NotContains(t, nightly, `id="entry-2-job"`, "no last job")
}

// Pause stops an entry's ticks, for the schedule processes too; resume
// lets the next one run.
func TestSchedulePauseAndResumeFromThePage(t *testing.T) {
	t.Parallel()
	b := setupSchedule(t, dashboard.Options{})
	b.pass(t, 0)
	before := b.ready(t)

	res := b.post(t, "schedule/pause", url.Values{"entry": {"ping"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "../schedule", res.Header.Get("Location"))
	_, body, _ := b.get(t, "schedule")
	ping := row(t, body, 0)
	require.Contains(t, ping, `<span class="badge warn" id="entry-0-state">paused</span>`)
	require.Contains(t, ping, `id="entry-0-resume">Resume</button>`)
	require.NotContains(t, ping, `id="entry-0-pause"`)

	require.Equal(t, schedule.TickPaused, b.pass(t, time.Minute)["ping"].Outcome)
	require.Equal(t, before, b.ready(t), "the paused tick pushed nothing")
	_, body, _ = b.get(t, "schedule")
	require.Contains(t, row(t, body, 0), "skipped: paused")

	res = b.post(t, "schedule/resume", url.Values{"entry": {"ping"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	_, body, _ = b.get(t, "schedule")
	require.Contains(t, row(t, body, 0), `id="entry-0-state">active</span>`)
	require.Equal(t, schedule.TickDispatched, b.pass(t, 2*time.Minute)["ping"].Outcome)
	require.Equal(t, before+1, b.ready(t))

	// An entry named with HTML is paused by its name, as the form sends it.
	res = b.post(t, "schedule/pause", url.Values{"entry": {evil}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	st, err := b.s.Status(b.ctx, b.engine)
	require.NoError(t, err)
	require.Equal(t, evil, st[1].Name)
	require.True(t, st[1].Paused)

	res = b.post(t, "schedule/pause", url.Values{"entry": {"nope"}}, b.srv.URL)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// Run now dispatches the entry's job and says which; an entry without
// overlapping whose last run is still queued says why it did not.
func TestScheduleRunNowFromThePage(t *testing.T) {
	t.Parallel()
	b := setupSchedule(t, dashboard.Options{})
	res := b.post(t, "schedule/run", url.Values{"entry": {"nightly"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "../schedule?note="), loc)
	_, body, _ := b.get(t, strings.TrimPrefix(loc, "../"))
	m := regexp.MustCompile(`Dispatched <b>nightly</b> now: job <a class="mono" href="./jobs/([0-9A-Za-z]+)">`).FindStringSubmatch(body)
	require.NotNil(t, m, body)
	j, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "notes", m[1])
	require.NoError(t, err)
	require.True(t, ok, "the job is in the queue")
	require.Equal(t, runtime.StateReady, j.State)
	_, queue, _ := b.get(t, "queues/notes")
	require.Contains(t, queue, m[1])

	res = b.post(t, "schedule/run", url.Values{"entry": {"nightly"}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	_, body, _ = b.get(t, strings.TrimPrefix(res.Header.Get("Location"), "../"))
	require.Contains(t, body, `<p class="note bad" id="note" role="status">Could not run <b>nightly</b> now:`)
	require.Contains(t, body, "is held by job "+m[1])
	require.Equal(t, int64(1), b.ready(t))

	// A paused entry runs all the same; its name is escaped in the note.
	res = b.post(t, "schedule/pause", url.Values{"entry": {evil}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res = b.post(t, "schedule/run", url.Values{"entry": {evil}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	_, body, _ = b.get(t, strings.TrimPrefix(res.Header.Get("Location"), "../"))
	require.Contains(t, body, "Dispatched <b>&lt;script&gt;alert(1)&lt;/script&gt;")
	require.NotContains(t, body, "<script>alert")
	require.Equal(t, int64(2), b.ready(t))

	// A note the handler does not know shows nothing.
	_, body, _ = b.get(t, "schedule?note=made-up")
	require.NotContains(t, body, `id="note"`)
}

// Read-only hides the actions and refuses them; a cross-site form is
// refused too.
func TestScheduleActionsRefused(t *testing.T) {
	t.Parallel()
	ro := setupSchedule(t, dashboard.Options{ReadOnly: true})
	_, body, _ := ro.get(t, "schedule")
	require.Contains(t, body, "ping")
	require.NotContains(t, body, "Pause</button>")
	require.NotContains(t, body, "Run now</button>")
	for _, action := range []string{"pause", "resume", "run"} {
		res := ro.post(t, "schedule/"+action, url.Values{"entry": {"ping"}}, ro.srv.URL)
		require.Equal(t, http.StatusForbidden, res.StatusCode, action)
	}
	st, err := ro.s.Status(ro.ctx, ro.engine)
	require.NoError(t, err)
	require.False(t, st[0].Paused)
	require.Zero(t, ro.ready(t))

	b := setupSchedule(t, dashboard.Options{})
	res := b.post(t, "schedule/run", url.Values{"entry": {"ping"}}, "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Zero(t, b.ready(t))
}

// Without a schedule the page says how to give one, and the actions
// find nothing.
func TestSchedulePageWithoutSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	_, overview, _ := b.get(t, "")
	require.NotContains(t, overview, "Periodic</a>")
	status, body, _ := b.get(t, "schedule")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "dashboard.Options{Schedule: s}")
	require.Contains(t, body, "console.WithSchedule(s)")
	res := b.post(t, "schedule/run", url.Values{"entry": {"ping"}}, b.srv.URL)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
