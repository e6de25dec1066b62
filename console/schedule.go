package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// WithSchedule sets Command.Schedule, the application's periodic jobs:
// schedule:work, schedule:run, schedule:list and schedule:test run it,
// and queue:work --schedule runs it inside a worker.
func WithSchedule(s *schedule.Schedule) Option {
	return func(c *Command) { c.Schedule = s }
}

// errNoSchedule is the error of a schedule command without a schedule.
var errNoSchedule = errors.New("needs the application's schedule, so it runs from the application's own binary: " +
	"call console.Main(router, console.WithSchedule(s)) in its main (see go doc github.com/jobgen/jobgen/console)")

var scheduleWorkVerb = &verb{
	name:          "schedule:work",
	summary:       "Dispatch the schedule's jobs as they fall due, until stopped",
	maxArgs:       0,
	needsSchedule: true,
	about: `Run the application's schedule: dispatch the job of each entry at each of
its ticks. Run as many as you like, on any hosts, for availability: each
tick is dispatched once in all, by whichever process claims it first.
A process that starts after every one was down dispatches, per entry,
the last tick missed (or as the entry's CatchUp or SkipMissed says).
SIGTERM or Ctrl-C stops it. It prints a line per job it dispatched;
--quiet leaves them out.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		quiet := new(bool)
		fs.boolVar(quiet, "quiet", false, "print no line per dispatch")
		return func(ctx context.Context, s *session) error {
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
			defer stop()
			entries, err := s.c.Schedule.Entries()
			if err != nil {
				return err
			}
			word := "entries"
			if len(entries) == 1 {
				word = "entry"
			}
			fmt.Fprintf(s.out, "Running the schedule: %d %s. Stop it with Ctrl-C or SIGTERM.\n", len(entries), word)
			if err := s.c.Schedule.Run(ctx, s.engine, s.scheduleConfig(*quiet)); err != nil {
				return err
			}
			fmt.Fprintln(s.out, "Schedule stopped.")
			return nil
		}
	},
}

var scheduleRunVerb = &verb{
	name:          "schedule:run",
	summary:       "Dispatch the schedule's jobs that are due now, once",
	maxArgs:       0,
	needsSchedule: true,
	about: `Make one pass over the schedule: dispatch each entry's latest tick that
is due and not dispatched yet, then exit. For a system cron that runs
it every minute (* * * * * myapp schedule:run), instead of
schedule:work; both may run at once, and each tick is still dispatched
once.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			reports, err := s.c.Schedule.RunDue(ctx, s.engine, schedule.Config{Logger: s.c.logger()})
			n := 0
			for _, r := range reports {
				if r.Outcome == schedule.TickDispatched {
					n++
					printTick(s.out, r)
				}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "Dispatched %d %s.\n", n, plural(int64(n), "job"))
			return nil
		}
	},
}

var scheduleListVerb = &verb{
	name:          "schedule:list",
	summary:       "List the schedule's entries, their next and last runs",
	maxArgs:       0,
	needsSchedule: true,
	about: `List the entries of the application's schedule: name, spec, queue,
state (active, or paused by schedule:pause), the next tick in the
entry's zone, and the last tick dispatched (or skipped while the last
run was still queued or running, or while paused), as kept in Redis.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			st, err := s.c.Schedule.Status(ctx, s.engine)
			if err != nil {
				return err
			}
			tw := table(s.out)
			fmt.Fprintln(tw, "NAME\tSPEC\tQUEUE\tSTATE\tNEXT\tLAST")
			for _, e := range st {
				last := "never"
				switch {
				case e.LastTick.IsZero():
				case e.Skipped && e.SkippedFor == "":
					last = e.LastTick.Format(timeFormat) + " skipped: paused"
				case e.Skipped:
					last = e.LastTick.Format(timeFormat) + " skipped: job " + e.SkippedFor + " still queued or running"
				default:
					last = e.LastTick.Format(timeFormat) + " job " + e.LastJobID
				}
				next := "never"
				if !e.Next.IsZero() {
					next = e.Next.Format(timeFormat)
				}
				state := "active"
				if e.Paused {
					state = "paused"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Spec, e.Queue, state, next, last)
			}
			return tw.Flush()
		}
	},
}

var scheduleTestVerb = &verb{
	name:          "schedule:test",
	args:          "NAME",
	summary:       "Dispatch one entry of the schedule now",
	maxArgs:       1,
	needsSchedule: true,
	about: `Dispatch the job of the schedule entry NAME (as schedule:list shows it)
now, with the entry's queue and options, whatever its ticks, and even
while it is paused. An entry without overlapping is refused while its
last run is queued or running. The entry's ticks are not changed.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the entry to dispatch: one of %s", entryNames(s.c.Schedule))
			}
			id, err := s.c.Schedule.DispatchNow(ctx, s.engine, s.args[0])
			if err != nil {
				return entryError(s, err)
			}
			fmt.Fprintf(s.out, "Dispatched %s: job %s.\n", s.args[0], id)
			return nil
		}
	},
}

var schedulePauseVerb = &verb{
	name:          "schedule:pause",
	args:          "NAME",
	summary:       "Pause one entry of the schedule",
	maxArgs:       1,
	needsSchedule: true,
	about: `Pause the schedule entry NAME (as schedule:list shows it) for every
process that runs the schedule: its ticks count as run and dispatch
nothing until schedule:resume. The pause is kept in Redis, so it
outlasts restarts and deploys. schedule:test still dispatches a paused
entry.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			return setPaused(ctx, s, true)
		}
	},
}

var scheduleResumeVerb = &verb{
	name:          "schedule:resume",
	args:          "NAME",
	summary:       "Undo schedule:pause",
	maxArgs:       1,
	needsSchedule: true,
	about: `Resume the schedule entry NAME, paused by schedule:pause: its next tick
dispatches its job again. The ticks that fell while it was paused do
not run.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			return setPaused(ctx, s, false)
		}
	},
}

// setPaused runs schedule:pause or schedule:resume.
func setPaused(ctx context.Context, s *session, paused bool) error {
	verb, do, done := "resume", s.c.Schedule.ResumeEntry, "Resumed"
	if paused {
		verb, do, done = "pause", s.c.Schedule.PauseEntry, "Paused"
	}
	if len(s.args) != 1 {
		return usagef("name the entry to %s: one of %s", verb, entryNames(s.c.Schedule))
	}
	if err := do(ctx, s.engine, s.args[0]); err != nil {
		return entryError(s, err)
	}
	fmt.Fprintf(s.out, "%s %s.\n", done, s.args[0])
	return nil
}

// entryError turns the error of an unknown entry name into a usage
// error that lists the names.
func entryError(s *session, err error) error {
	if errors.Is(err, runtime.ErrInvalid) && strings.Contains(err.Error(), "no schedule entry") {
		return usagef("no entry is named %q: one of %s", s.args[0], entryNames(s.c.Schedule))
	}
	return err
}

const timeFormat = "2006-01-02 15:04:05 MST"

// entryNames lists the names of the schedule's entries, quoted.
func entryNames(s *schedule.Schedule) string {
	entries, err := s.Entries()
	if err != nil || len(entries) == 0 {
		return "none"
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = fmt.Sprintf("%q", e.EntryName())
	}
	return strings.Join(names, ", ")
}

// scheduleConfig is the configuration of a schedule run from a command:
// it logs through the command's logger and prints a line per dispatch
// unless quiet.
func (s *session) scheduleConfig(quiet bool) schedule.Config {
	cfg := schedule.Config{Logger: s.c.logger()}
	if !quiet {
		var mu sync.Mutex
		cfg.OnTick = func(r schedule.TickReport) {
			if r.Outcome != schedule.TickDispatched {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			printTick(s.out, r)
		}
	}
	return cfg
}

// printTick prints a dispatched tick:
//
//	2026-05-01 10:00:00 SCHEDULED prune-carts tick 2026-05-01T10:00:00Z 01JT...
func printTick(w io.Writer, r schedule.TickReport) {
	fmt.Fprintf(w, "%s SCHEDULED %s tick %s %s\n", time.Now().Format(time.DateTime), r.Entry, r.Tick.UTC().Format(time.RFC3339), r.JobID)
}

// runSchedule runs the schedule beside a worker (queue:work --schedule)
// until the worker stops or a signal stops it; the returned function
// stops it and waits.
func (s *session) runSchedule(ctx context.Context, quiet bool) (stop func(), err error) {
	if s.c.Schedule == nil {
		return nil, errNoSchedule
	}
	if _, err := s.c.Schedule.Entries(); err != nil {
		return nil, err
	}
	ctx, cancel := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.c.Schedule.Run(ctx, s.engine, s.scheduleConfig(quiet))
	}()
	return func() { cancel(); <-done }, nil
}

// lockedWriter lets several goroutines write whole lines to one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
