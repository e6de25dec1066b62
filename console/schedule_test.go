package console_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/schedule"
)

func TestScheduleCommandsNeedASchedule(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"schedule:work", "schedule:run", "schedule:list", "schedule:test", "schedule:pause", "schedule:resume"} {
		code, _, stderr := runNoRedis(&console.Command{}, v, "--redis", "embedded://")
		require.Equal(t, 1, code, v)
		require.Contains(t, oneLine(t, stderr), "app "+v+": needs the application's schedule", v)
		require.Contains(t, stderr, "console.WithSchedule(s)")
	}
	_, stdout, _ := runNoRedis(&console.Command{}, "list")
	require.Regexp(t, `schedule:work +`+regexp.QuoteMeta("Dispatch the schedule's jobs as they fall due, until stopped (from your own binary: console.WithSchedule)"), stdout)
}

func TestScheduleCommands(t *testing.T) {
	// The nightly entry falls due about twelve hours from now, so that no
	// run of the test meets its minute (and never at 02:00, which a
	// spring-forward night skips).
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	hour := (time.Now().In(paris).Hour() + 12) % 24
	if hour == 2 {
		hour = 1
	}
	nightly := fmt.Sprintf("test.Greet 0 %d * * * Europe/Paris", hour)
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		s := schedule.New()
		s.EveryMinute(greet{"minutely"}).Name("greet")
		s.DailyAt(fmt.Sprintf("%02d:00", hour), greet{"nightly"}).Timezone("Europe/Paris").OnQueue("nightly").WithoutOverlapping()
		b.schedule = s

		// Both schedule:run calls see the same tick of the minutely entry
		// when they start well inside a minute.
		if time.Now().Second() >= 55 {
			time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)))
		}
		out := b.ok(t, "schedule:run")
		require.Regexp(t, `SCHEDULED greet tick \S+Z \S+\nDispatched 1 job\.\n$`, out)
		require.Equal(t, "Dispatched 0 jobs.\n", b.ok(t, "schedule:run"), "the tick is taken")
		require.EqualValues(t, 1, b.sizes(t, "default").Ready)

		out = b.ok(t, "schedule:list")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 3)
		require.Regexp(t, `^NAME +SPEC +QUEUE +STATE +NEXT +LAST$`, lines[0])
		require.Regexp(t, `^greet +\* \* \* \* \* +default +active +\S+ \S+ UTC +\S+ \S+ UTC job \S+$`, lines[1])
		spec := fmt.Sprintf(`0 %d \* \* \* Europe/Paris`, hour)
		require.Regexp(t, `^test\.Greet `+spec+` +`+spec+fmt.Sprintf(` +nightly +active +\S+ %02d:00:00 CES?T +never$`, hour), lines[2])

		// Pausing is kept in Redis: the next command sees it.
		require.Equal(t, "Paused greet.\n", b.ok(t, "schedule:pause", "greet"))
		out = b.ok(t, "schedule:list")
		require.Regexp(t, `(?m)^greet +\* \* \* \* \* +default +paused +`, out)
		code, _, stderr := b.run(t, "schedule:pause", "nope")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `no entry is named "nope": one of "greet", `)
		code, _, stderr = b.run(t, "schedule:resume")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `name the entry to resume: one of "greet", `)
		require.Equal(t, "Resumed greet.\n", b.ok(t, "schedule:resume", "greet"))
		require.Regexp(t, `(?m)^greet +\* \* \* \* \* +default +active +`, b.ok(t, "schedule:list"))

		out = b.ok(t, "schedule:test", nightly)
		require.Regexp(t, regexp.QuoteMeta("Dispatched "+nightly+": job ")+`\S+\.\n`, out)
		require.EqualValues(t, 1, b.sizes(t, "nightly").Ready)
		code, _, stderr = b.run(t, "schedule:test", nightly)
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "is held by job", "without overlapping while the last run is queued")
		code, _, stderr = b.run(t, "schedule:test", "nope")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `no entry is named "nope": one of "greet", "`+nightly+`"`)

		// queue:work --schedule dispatches and runs in one process.
		b.schedule = schedule.New()
		b.schedule.EveryMinute(greet{"worker"}).Name("in-worker")
		out = b.ok(t, "queue:work", "--schedule", "--max-jobs", "2")
		require.Contains(t, out, "SCHEDULED in-worker tick")
		require.Equal(t, 2, strings.Count(out, " DONE "), out)
	})
}
