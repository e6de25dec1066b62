package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Entry is one entry of a Schedule. Its methods set its
// frequency, zone and dispatch options, and return it, so they chain.
// Frequency methods set fields of its cron expression as Laravel's do:
// DailyAt("09:00").Weekdays() is "0 9 * * 1-5".
type Entry struct {
	job        runtime.Job
	fields     [6]string // seconds, minute, hour, day of month, month, day of week
	every      time.Duration
	zone       string
	loc        *time.Location
	name       string
	queue      string
	connection string
	delay      time.Duration
	delaySet   bool
	overlap    time.Duration // > 0: without overlapping, the lock's lifetime
	missed     int
	err        error

	// mu guards spec, built by check when first needed: several runs of
	// one schedule may check its entries at once.
	mu   sync.Mutex
	spec spec
}

func (e *Entry) fail(format string, args ...any) *Entry {
	if e.err == nil {
		e.err = fmt.Errorf("%w: schedule entry for %s: %s", runtime.ErrInvalid, e.job.JobName(), fmt.Sprintf(format, args...))
	}
	return e
}

// Cron sets the entry's cron expression (see Schedule.Cron).
func (e *Entry) Cron(expr string) *Entry {
	e.spec = nil
	expr = strings.TrimSpace(expr)
	if d, ok := strings.CutPrefix(expr, "@every "); ok {
		every, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return e.fail("%q: %v", expr, err)
		}
		return e.Every(every)
	}
	switch expr {
	case "@yearly", "@annually":
		expr = "0 0 1 1 *"
	case "@monthly":
		expr = "0 0 1 * *"
	case "@weekly":
		expr = "0 0 * * 0"
	case "@daily", "@midnight":
		expr = "0 0 * * *"
	case "@hourly":
		expr = "0 * * * *"
	}
	f := strings.Fields(expr)
	switch len(f) {
	case 5:
		e.fields = [6]string{"0", f[0], f[1], f[2], f[3], f[4]}
	case 6:
		e.fields = [6]string(f)
	default:
		return e.fail("cron expression %q: want 5 fields, 6 with seconds first, or a tag such as @daily", expr)
	}
	e.every = 0
	return e
}

// Every makes the entry run every d of real time (see Schedule.Every).
func (e *Entry) Every(d time.Duration) *Entry {
	e.spec = nil
	if _, err := newEvery(d); err != nil {
		return e.fail("%v", err)
	}
	e.every = d
	return e
}

// set sets cron fields: pairs of index and value.
func (e *Entry) set(kv ...any) *Entry {
	e.spec = nil
	if e.every > 0 {
		return e.fail("Every(%v) takes no day or time modifier: use a cron expression or a frequency method", e.every)
	}
	for i := 0; i < len(kv); i += 2 {
		e.fields[kv[i].(int)] = kv[i+1].(string)
	}
	return e
}

const (
	fSec = iota
	fMin
	fHour
	fDom
	fMonth
	fDow
)

// EveryMinute runs the entry at the start of every minute.
func (e *Entry) EveryMinute() *Entry {
	return e.set(fSec, "0", fMin, "*")
}

// EveryMinutes runs the entry every n minutes of the hour, n dividing 60
// (everyTwoMinutes, everyFiveMinutes ... everyThirtyMinutes).
func (e *Entry) EveryMinutes(n int) *Entry {
	if n < 1 || 60%n != 0 {
		return e.fail("EveryMinutes(%d): n must divide 60", n)
	}
	return e.set(fSec, "0", fMin, "*/"+strconv.Itoa(n))
}

// EveryFiveMinutes runs the entry at :00, :05, ... of every hour.
func (e *Entry) EveryFiveMinutes() *Entry { return e.EveryMinutes(5) }

// EveryTenMinutes runs the entry at :00, :10, ... of every hour.
func (e *Entry) EveryTenMinutes() *Entry { return e.EveryMinutes(10) }

// EveryFifteenMinutes runs the entry at :00, :15, :30 and :45.
func (e *Entry) EveryFifteenMinutes() *Entry { return e.EveryMinutes(15) }

// EveryThirtyMinutes runs the entry at :00 and :30.
func (e *Entry) EveryThirtyMinutes() *Entry { return e.EveryMinutes(30) }

// Hourly runs the entry at the start of every hour.
func (e *Entry) Hourly() *Entry { return e.HourlyAt(0) }

// HourlyAt runs the entry at minute m of every hour.
func (e *Entry) HourlyAt(m int) *Entry {
	if m < 0 || m > 59 {
		return e.fail("HourlyAt(%d): minute out of range", m)
	}
	return e.set(fSec, "0", fMin, strconv.Itoa(m), fHour, "*")
}

// EveryHours runs the entry every n hours of the day, at minute 0, n
// dividing 24 (everyTwoHours ... everySixHours).
func (e *Entry) EveryHours(n int) *Entry {
	if n < 1 || 24%n != 0 {
		return e.fail("EveryHours(%d): n must divide 24", n)
	}
	return e.set(fSec, "0", fMin, "0", fHour, "*/"+strconv.Itoa(n))
}

// Daily runs the entry at midnight.
func (e *Entry) Daily() *Entry { return e.DailyAt("00:00") }

// DailyAt runs the entry every day at hh:mm or hh:mm:ss.
func (e *Entry) DailyAt(at string) *Entry {
	h, m, s, ok := parseClock(at)
	if !ok {
		return e.fail("DailyAt(%q): want hh:mm or hh:mm:ss", at)
	}
	return e.set(fSec, s, fMin, m, fHour, h)
}

// At sets the time of day of a daily, weekly, monthly or yearly entry.
func (e *Entry) At(at string) *Entry { return e.DailyAt(at) }

// TwiceDaily runs the entry at minute 0 of hours h1 and h2.
func (e *Entry) TwiceDaily(h1, h2 int) *Entry {
	if h1 < 0 || h1 > 23 || h2 < 0 || h2 > 23 {
		return e.fail("TwiceDaily(%d, %d): hour out of range", h1, h2)
	}
	return e.set(fSec, "0", fMin, "0", fHour, strconv.Itoa(h1)+","+strconv.Itoa(h2))
}

// Weekly runs the entry at midnight on Sundays.
func (e *Entry) Weekly() *Entry {
	return e.set(fSec, "0", fMin, "0", fHour, "0", fDow, "0")
}

// WeeklyOn runs the entry on day at hh:mm.
func (e *Entry) WeeklyOn(day time.Weekday, at string) *Entry {
	return e.DailyAt(at).Days(day)
}

// Monthly runs the entry at midnight on the first of the month.
func (e *Entry) Monthly() *Entry { return e.MonthlyOn(1, "00:00") }

// MonthlyOn runs the entry on day of the month at hh:mm.
func (e *Entry) MonthlyOn(day int, at string) *Entry {
	if day < 1 || day > 31 {
		return e.fail("MonthlyOn(%d): day out of range", day)
	}
	return e.DailyAt(at).set(fDom, strconv.Itoa(day))
}

// LastDayOfMonth runs the entry on the last day of the month at hh:mm.
func (e *Entry) LastDayOfMonth(at string) *Entry {
	return e.DailyAt(at).set(fDom, "L")
}

// Quarterly runs the entry at midnight on the first day of each quarter.
func (e *Entry) Quarterly() *Entry {
	return e.Monthly().set(fMonth, "1,4,7,10")
}

// Yearly runs the entry at midnight on 1 January.
func (e *Entry) Yearly() *Entry {
	return e.Monthly().set(fMonth, "1")
}

// Weekdays limits the entry to Monday to Friday.
func (e *Entry) Weekdays() *Entry { return e.set(fDow, "1-5") }

// Weekends limits the entry to Saturday and Sunday.
func (e *Entry) Weekends() *Entry { return e.set(fDow, "0,6") }

// Mondays limits the entry to Mondays; Tuesdays ... Sundays likewise.
func (e *Entry) Mondays() *Entry { return e.Days(time.Monday) }

// Tuesdays limits the entry to Tuesdays.
func (e *Entry) Tuesdays() *Entry { return e.Days(time.Tuesday) }

// Wednesdays limits the entry to Wednesdays.
func (e *Entry) Wednesdays() *Entry { return e.Days(time.Wednesday) }

// Thursdays limits the entry to Thursdays.
func (e *Entry) Thursdays() *Entry { return e.Days(time.Thursday) }

// Fridays limits the entry to Fridays.
func (e *Entry) Fridays() *Entry { return e.Days(time.Friday) }

// Saturdays limits the entry to Saturdays.
func (e *Entry) Saturdays() *Entry { return e.Days(time.Saturday) }

// Sundays limits the entry to Sundays.
func (e *Entry) Sundays() *Entry { return e.Days(time.Sunday) }

// Days limits the entry to the days given.
func (e *Entry) Days(days ...time.Weekday) *Entry {
	if len(days) == 0 {
		return e.fail("Days: no day given")
	}
	s := make([]string, len(days))
	for i, d := range days {
		s[i] = strconv.Itoa(int(d))
	}
	return e.set(fDow, strings.Join(s, ","))
}

// Timezone reads the entry's cron fields on the wall clock of the IANA
// zone tz (such as "Europe/Paris"); default UTC. On the days clocks
// change, a time that does not exist runs once, at the first valid
// instant after it, and a time that occurs twice runs once, at its first
// occurrence (see the package doc, Time zones).
func (e *Entry) Timezone(tz string) *Entry {
	e.spec = nil
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return e.fail("Timezone(%q): %v", tz, err)
	}
	e.zone, e.loc = tz, loc
	return e
}

// Name gives the entry its name: the identity of its ticks and state in
// Redis, and what schedule:list shows and schedule:test takes. By
// default it is the job's wire name and the spec, with its zone:
// "app.PruneCarts 0 3 * * * Europe/Paris". A default name changes with
// the spec, which makes a new entry; give a name to keep an entry's
// state (its last run) across such changes, and to tell apart two
// entries of one job with one spec. No { or }.
func (e *Entry) Name(name string) *Entry {
	e.name = name
	return e
}

// OnQueue sends the entry's jobs to queue q.
func (e *Entry) OnQueue(q string) *Entry {
	e.queue = q
	return e
}

// OnConnection sends the entry's jobs through the engine registered as
// connection c (runtime.SetConnection).
func (e *Entry) OnConnection(c string) *Entry {
	e.connection = c
	return e
}

// Delay makes each of the entry's jobs ready d after its tick's dispatch.
func (e *Entry) Delay(d time.Duration) *Entry {
	e.delay, e.delaySet = d, true
	return e
}

// WithoutOverlapping skips a tick while the job of the entry's last run
// is still queued or running, as a unique job does (JobOptions.UniqueFor): the tick
// counts as run, and nothing is pushed. The lock is the entry's own; it
// goes when the job ends for good, or expires after expires (default 24
// hours, Laravel's) if its worker died.
func (e *Entry) WithoutOverlapping(expires ...time.Duration) *Entry {
	e.overlap = 24 * time.Hour
	if len(expires) > 0 {
		if expires[0] < time.Millisecond {
			return e.fail("WithoutOverlapping(%v): must be at least 1ms", expires[0])
		}
		e.overlap = expires[0]
	}
	return e
}

// CatchUp sets how many ticks the entry tries at each pass, its latest
// tick included, which bounds what runs after every schedule process was
// down: 1 (the default) runs the last tick missed, none before it; n
// runs the last n missed. CatchUp(0) is SkipMissed.
func (e *Entry) CatchUp(n int) *Entry {
	if n < 0 || n > 100 {
		return e.fail("CatchUp(%d): between 0 and 100", n)
	}
	e.missed = n
	return e
}

// SkipMissed makes the entry run a tick only while it is on time (within
// Config.Grace), so that ticks missed while every schedule
// process was down never run.
func (e *Entry) SkipMissed() *Entry { return e.CatchUp(0) }

// Job returns the job the entry dispatches.
func (e *Entry) Job() runtime.Job { return e.job }

// Spec returns the entry's spec as written in its name: a cron
// expression with its zone, or "@every d".
func (e *Entry) Spec() string {
	if e.check() != nil {
		return ""
	}
	return e.spec.String()
}

// EntryName returns the entry's name (see Name).
func (e *Entry) EntryName() string {
	if e.name != "" {
		return e.name
	}
	if e.check() != nil {
		return e.job.JobName()
	}
	return e.job.JobName() + " " + e.spec.String()
}

// Next returns the entry's first tick after t, in its zone.
func (e *Entry) Next(t time.Time) time.Time {
	if e.check() != nil {
		return time.Time{}
	}
	n := e.spec.Next(t)
	if e.loc != nil && !n.IsZero() {
		n = n.In(e.loc)
	}
	return n
}

// check builds the entry's spec and reports what is wrong with it.
func (e *Entry) check() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if e.spec != nil {
		return nil
	}
	name := e.name
	if name == "" {
		name = e.job.JobName()
	}
	if strings.ContainsAny(name, "{}") {
		return fmt.Errorf("%w: schedule entry name %q must not contain { or }: its state is kept in the slot of its queue", runtime.ErrInvalid, name)
	}
	if e.queue != "" {
		if err := runtime.ValidateQueueName(e.queue); err != nil {
			return fmt.Errorf("schedule entry for %s: %w", e.job.JobName(), err)
		}
	}
	var sp spec
	var err error
	if e.every > 0 {
		sp, err = newEvery(e.every)
	} else {
		f := e.fields[:]
		if f[0] == "0" {
			f = f[1:] // five fields read better, and name the entry as written
		}
		sp, err = parseSpec(strings.Join(f, " "), e.loc)
	}
	if err != nil {
		return fmt.Errorf("%w: schedule entry for %s: %v", runtime.ErrInvalid, e.job.JobName(), err)
	}
	e.spec = sp
	return nil
}

// parseClock reads hh:mm or hh:mm:ss into cron fields.
func parseClock(at string) (h, m, s string, ok bool) {
	parts := strings.Split(at, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", "", "", false
	}
	limits := []int{23, 59, 59}
	out := []string{"0", "0", "0"}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > limits[i] {
			return "", "", "", false
		}
		out[i] = strconv.Itoa(n)
	}
	return out[0], out[1], out[2], true
}
