package console

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

var clearVerb = &verb{
	name:    "queue:clear",
	args:    "[queue...]",
	summary: "Delete every pending job of a queue",
	maxArgs: -1,
	about: `Delete every ready, delayed and reserved job of the queues named (as
arguments or with --queue; default "default"). Failed jobs and the
paused flag are kept. A worker running a deleted job finishes it, but
cannot acknowledge it.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "queues to clear", `"default"`)
		return func(ctx context.Context, s *session) error {
			named := slices.Concat(s.args, queues)
			if len(named) == 0 {
				named = []string{runtime.DefaultQueue}
			}
			qs, err := s.queues(ctx, named)
			if err != nil {
				return err
			}
			for _, q := range qs {
				n, err := s.ins.ClearQueue(ctx, q)
				if err != nil {
					return err
				}
				fmt.Fprintf(s.out, "Cleared %d %s from queue %s.\n", n, plural(n, "job"), q)
			}
			return nil
		}
	},
}

var restartVerb = &verb{
	name:    "queue:restart",
	summary: "Ask every worker to exit after its current jobs",
	maxArgs: 0,
	about: `Broadcast a restart: every worker under the prefix takes no new job,
lets its running jobs finish (within its --grace), and exits, within
about a second, so that its supervisor starts it again on the new code.
Run it after each deploy.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		return func(ctx context.Context, s *session) error {
			if err := s.ins.RestartWorkers(ctx); err != nil {
				return fmt.Errorf("broadcast restart: %w", err)
			}
			fmt.Fprintf(s.out, "Broadcast a restart to the workers of prefix %s.\n", s.engine.Config().Prefix)
			return nil
		}
	},
}

var pauseVerb = &verb{
	name:    "queue:pause",
	args:    "queue...",
	summary: "Stop workers taking jobs from queues",
	maxArgs: -1,
	about: `Pause the queues named: workers take no new job from them until
queue:resume. Running jobs go on, and jobs can still be dispatched.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "queues to pause", "")
		return func(ctx context.Context, s *session) error {
			qs, err := s.namedQueues(ctx, queues, "pause")
			if err != nil {
				return err
			}
			for _, q := range qs {
				if err := s.ins.PauseQueue(ctx, q); err != nil {
					return fmt.Errorf("pause %q: %w", q, err)
				}
				fmt.Fprintf(s.out, "Paused queue %s.\n", q)
			}
			return nil
		}
	},
}

var resumeVerb = &verb{
	name:    "queue:resume",
	args:    "queue...",
	summary: "Let workers take jobs from paused queues again",
	maxArgs: -1,
	about:   `Resume the queues named, paused by queue:pause.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "queues to resume", "")
		return func(ctx context.Context, s *session) error {
			qs, err := s.namedQueues(ctx, queues, "resume")
			if err != nil {
				return err
			}
			for _, q := range qs {
				if err := s.ins.ResumeQueue(ctx, q); err != nil {
					return fmt.Errorf("resume %q: %w", q, err)
				}
				fmt.Fprintf(s.out, "Resumed queue %s.\n", q)
			}
			return nil
		}
	},
}

// namedQueues returns the queues named as arguments and with --queue;
// at least one is needed.
func (s *session) namedQueues(ctx context.Context, flagged []string, what string) ([]string, error) {
	named := slices.Concat(s.args, flagged)
	if len(named) == 0 {
		return nil, usagef("name the queues to %s", what)
	}
	return s.queues(ctx, named)
}

var sizeVerb = &verb{
	name:    "queue:size",
	args:    "[queue...]",
	summary: "Show the jobs of each queue by state",
	maxArgs: -1,
	about: `Show, for every queue or for the queues named, how many jobs are ready,
delayed, reserved (running) and failed, and whether it is paused.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "only these queues", "every queue")
		return func(ctx context.Context, s *session) error {
			qs, err := s.queues(ctx, slices.Concat(s.args, queues))
			if err != nil {
				return err
			}
			if len(qs) == 0 {
				fmt.Fprintln(s.out, "No queues yet: nothing has been dispatched under this prefix.")
				return nil
			}
			tw := table(s.out)
			fmt.Fprintln(tw, "QUEUE\tREADY\tDELAYED\tRESERVED\tFAILED\tPAUSED")
			for _, q := range qs {
				sz, err := s.ins.Sizes(ctx, q)
				if err != nil {
					return err
				}
				paused, err := s.ins.QueuePaused(ctx, q)
				if err != nil {
					return fmt.Errorf("is %q paused: %w", q, err)
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", q, sz.Ready, sz.Delayed, sz.Reserved, sz.Failed, yesNo(paused))
			}
			return tw.Flush()
		}
	},
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

var monitorVerb = &verb{
	name:    "queue:monitor",
	args:    "[queue...]",
	summary: "Check queue sizes against thresholds; fail if one is crossed",
	maxArgs: -1,
	// With Redis down it still reads the outbox from PostgreSQL.
	redisOptional: true,
	about: `Show the size of every queue, or of the queues named (ready, delayed and
reserved jobs), and its failed jobs. A queue with more than --max jobs,
or more than --max-failed failed jobs, is marked ALERT, and the command
says so on stderr and exits 1: run it from cron or a health check. Where
the application gives its outbox database (console.WithOutbox), a line
shows the outbox's backlog, the age of its oldest row and when a relay
last completed a pass, read from PostgreSQL, even with Redis down; a
missing outbox table is an ALERT, --max-outbox-age alerts on the oldest
row's age and on relays that stopped while rows wait, and
--max-relay-idle on relays that stopped. Without the database, the line
is what a relay last published to Redis. A queue with a concurrency limit or a rate (queue:limit) has a line
with them, its running jobs, and how often each held workers back. A line per Redis server shows its memory used against maxmemory and
its maxmemory-policy; a policy that may evict jobs is an ALERT. A queue
whose failed store was trimmed (EngineConfig.FailedMaxCount,
FailedMaxAge) has a line with how many failed jobs were dropped and
when; --failed-trimmed-within alerts on a recent trim. A queue
that a handler holds (runtime.HoldQueue) has a line with what is left
of the hold. A line shows jobs that workers gave back because their
schema version is newer than they know (docs/changing-jobs.md);
--alert-newer alerts on it. --max-wait alerts when a queue's oldest ready job has
waited longer, for every queue or per queue (emails=5m).`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		maxSize, maxFailed := int64(1000), int64(0)
		fs.queuesVar(&queues, "only these queues", "every queue")
		fs.Int64Var(&maxSize, "max", maxSize, "alert when a queue holds more than N jobs")
		fs.add("max", "")
		fs.Int64Var(&maxFailed, "max-failed", maxFailed, "alert when a queue holds more than N failed jobs")
		fs.add("max-failed", "no limit")
		alertNewer := new(bool)
		fs.boolVar(alertNewer, "alert-newer", false, "alert when workers gave back jobs of a schema version newer than they know in the last minute (monitor_versions.go)")
		var maxOutboxAge time.Duration
		fs.durationVar(&maxOutboxAge, "max-outbox-age", "alert when the outbox's oldest row has waited longer, or no relay has completed a pass for a minute (or this, if longer) while rows wait", "no limit")
		var maxRelayIdle time.Duration
		fs.durationVar(&maxRelayIdle, "max-relay-idle", "alert when no outbox relay has completed a pass for longer, rows or not (needs the outbox database)", "no limit")
		maxWait := waitFlag(fs)
		trimmedWithin := failedTrimmedFlag(fs)
		return func(ctx context.Context, s *session) error {
			if s.engine == nil {
				return s.monitorWithoutRedis(ctx, maxOutboxAge, maxRelayIdle)
			}
			qs, err := s.queues(ctx, slices.Concat(s.args, queues))
			if err != nil {
				return err
			}
			if maxSize < 0 || maxFailed < 0 {
				return usagef("--max and --max-failed must not be negative")
			}
			if len(qs) == 0 {
				fmt.Fprintln(s.out, "No queues yet: nothing has been dispatched under this prefix.")
				alerts := s.monitorMemory(ctx)
				waits, err := s.monitorWaits(ctx, nil, maxWait)
				if err != nil {
					return err
				}
				alerts = append(alerts, waits...)
				outboxAlerts, err := s.monitorOutbox(ctx, maxOutboxAge, maxRelayIdle)
				alerts = append(alerts, outboxAlerts...)
				if err == nil && len(alerts) > 0 {
					err = fmt.Errorf("over threshold: %s", strings.Join(alerts, ", "))
				}
				return err
			}
			checkFailed := false
			fs.Visit(func(f *flag.Flag) { checkFailed = checkFailed || f.Name == "max-failed" })
			var alerts []string
			tw := table(s.out)
			fmt.Fprintln(tw, "QUEUE\tSIZE\tFAILED\tSTATUS")
			for _, q := range qs {
				sz, err := s.ins.Sizes(ctx, q)
				if err != nil {
					return err
				}
				var why []string
				if sz.Total() > maxSize {
					why = append(why, fmt.Sprintf("%d jobs, more than %d", sz.Total(), maxSize))
				}
				if checkFailed && sz.Failed > maxFailed {
					why = append(why, fmt.Sprintf("%d failed, more than %d", sz.Failed, maxFailed))
				}
				status := "OK"
				if len(why) > 0 {
					status = "ALERT"
					alerts = append(alerts, fmt.Sprintf("%s (%s)", q, strings.Join(why, "; ")))
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", q, sz.Total(), sz.Failed, status)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if err := s.monitorLimits(ctx, qs); err != nil {
				return err
			}
			if err := s.monitorGroups(ctx, qs); err != nil {
				return err
			}
			newer, err := s.monitorNewer(ctx, qs, *alertNewer)
			if err != nil {
				return err
			}
			alerts = append(alerts, newer...)
			trimmed, err := s.monitorFailedTrimmed(ctx, qs, *trimmedWithin)
			if err != nil {
				return err
			}
			alerts = append(alerts, trimmed...)
			if err := s.monitorHolds(ctx, qs); err != nil {
				return err
			}
			waits, err := s.monitorWaits(ctx, qs, maxWait)
			if err != nil {
				return err
			}
			alerts = append(alerts, waits...)
			alerts = append(alerts, s.monitorMemory(ctx)...)
			outboxAlerts, err := s.monitorOutbox(ctx, maxOutboxAge, maxRelayIdle)
			if err != nil {
				return err
			}
			alerts = append(alerts, outboxAlerts...)
			if len(alerts) > 0 {
				return fmt.Errorf("%d %s over threshold: %s", len(alerts), plural(int64(len(alerts)), "queue"), strings.Join(alerts, ", "))
			}
			return nil
		}
	},
}

// monitorMemory prints each server's memory and eviction policy, and
// returns an alert for each whose policy may evict jobgen's keys.
func (s *session) monitorMemory(ctx context.Context) []string {
	var alerts []string
	for _, m := range s.ins.Memory(ctx) {
		if m.Err != nil {
			fmt.Fprintf(s.out, "Redis %s: memory not read: %s\n", m.Addr, oneLine(m.Err))
			continue
		}
		if m.Used < 0 {
			fmt.Fprintf(s.out, "Redis %s: memory not reported", m.Addr)
		} else {
			fmt.Fprintf(s.out, "Redis %s: %s used", m.Addr, bytesText(m.Used))
		}
		switch {
		case m.Used < 0:
		case m.Max > 0:
			fmt.Fprintf(s.out, " of maxmemory %s (%d%%)", bytesText(m.Max), m.Used*100/m.Max)
		default:
			fmt.Fprint(s.out, ", no maxmemory")
		}
		fmt.Fprintf(s.out, ", maxmemory-policy %s.\n", cmp.Or(m.Policy, "unknown"))
		if m.Evicts() {
			alerts = append(alerts, fmt.Sprintf("Redis %s (maxmemory-policy %s may evict jobs; set noeviction)", m.Addr, m.Policy))
		}
	}
	return alerts
}

// bytesText writes n bytes in the largest unit that keeps it at 1 or
// more.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}
