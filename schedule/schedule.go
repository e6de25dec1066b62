package schedule

import (
	"errors"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Schedule is the application's list of periodic jobs (Laravel's
// schedule()): each entry dispatches its job at every tick of its spec.
// Build it once at start-up and give it to the processes that run it
// (Schedule.Run, or console.WithSchedule for schedule:work and
// queue:work --schedule):
//
//	s := schedule.New()
//	s.Cron("0 3 * * *", PruneCarts{}).Timezone("Europe/Paris").WithoutOverlapping()
//	s.Every(5*time.Minute, SyncCRM{Full: false})
//	s.DailyAt("09:00", SendDigest{}).Weekdays()
//
// Each tick of each entry is dispatched once in all, however many
// processes run the schedule: the tick, named by the entry and its time,
// is claimed in the same Redis script call that pushes its job. No
// process leads; any may stop or die.
//
// Build a Schedule in one goroutine, then run it: any number of runs,
// in one process or several, may share it.
type Schedule struct {
	entries []*Entry
}

// New returns an empty schedule.
func New() *Schedule { return &Schedule{} }

// Job adds an entry that dispatches job every minute until a frequency
// method (Hourly, DailyAt, Cron, ...) says otherwise.
func (s *Schedule) Job(job runtime.Job) *Entry {
	e := &Entry{job: job, fields: [6]string{"0", "*", "*", "*", "*", "*"}, missed: 1}
	s.entries = append(s.entries, e)
	return e
}

// Cron adds an entry that dispatches job at the ticks of a cron
// expression: five fields (minute hour day-of-month month day-of-week),
// or six with seconds first, or a tag: @yearly, @monthly, @weekly,
// @daily, @hourly, or @every DURATION (see Every). The fields are read on
// the wall clock of the entry's Timezone, UTC by default.
func (s *Schedule) Cron(expr string, job runtime.Job) *Entry { return s.Job(job).Cron(expr) }

// Every adds an entry that dispatches job every d of real time, at the
// multiples of d since the Unix epoch (so every process agrees), a whole
// number of seconds: Every(5*time.Minute, j) runs at :00, :05, ... UTC.
// It ignores Timezone and daylight saving time, and takes no day or time
// modifiers.
func (s *Schedule) Every(d time.Duration, job runtime.Job) *Entry { return s.Job(job).Every(d) }

// EveryMinute adds an entry that runs job at the start of every minute.
func (s *Schedule) EveryMinute(job runtime.Job) *Entry { return s.Job(job) }

// Hourly adds an entry that runs job at the start of every hour.
func (s *Schedule) Hourly(job runtime.Job) *Entry { return s.Job(job).Hourly() }

// Daily adds an entry that runs job at midnight.
func (s *Schedule) Daily(job runtime.Job) *Entry { return s.Job(job).Daily() }

// DailyAt adds an entry that runs job every day at hh:mm (or hh:mm:ss).
func (s *Schedule) DailyAt(at string, job runtime.Job) *Entry { return s.Job(job).DailyAt(at) }

// Weekly adds an entry that runs job at midnight on Sundays.
func (s *Schedule) Weekly(job runtime.Job) *Entry { return s.Job(job).Weekly() }

// Monthly adds an entry that runs job at midnight on the first of the
// month.
func (s *Schedule) Monthly(job runtime.Job) *Entry { return s.Job(job).Monthly() }

// Entries returns the schedule's entries, checked: an error names each
// entry that is wrong (a bad spec, zone or name) and each name used twice.
func (s *Schedule) Entries() ([]*Entry, error) {
	var errs []error
	seen := map[string]bool{}
	for _, e := range s.entries {
		if err := e.check(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[e.EntryName()] {
			errs = append(errs, fmt.Errorf("%w: two schedule entries are named %q: give one a name of its own with Name", runtime.ErrInvalid, e.EntryName()))
		}
		seen[e.EntryName()] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return append([]*Entry(nil), s.entries...), nil
}

// Entry returns the entry named name.
func (s *Schedule) Entry(name string) (*Entry, bool) {
	for _, e := range s.entries {
		if e.check() == nil && e.EntryName() == name {
			return e, true
		}
	}
	return nil, false
}

// lookup returns the entry named name, once the schedule is checked.
func (s *Schedule) lookup(name string) (*Entry, error) {
	if _, err := s.Entries(); err != nil {
		return nil, err
	}
	en, ok := s.Entry(name)
	if !ok {
		return nil, fmt.Errorf("%w: no schedule entry is named %q", runtime.ErrInvalid, name)
	}
	return en, nil
}
