package console

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

var limitVerb = &verb{
	name:    "queue:limit",
	args:    "queue [N|off]",
	summary: "Show or set a queue's concurrency limit and rate",
	maxArgs: 2,
	about: `Set the most jobs of a queue running at once, over every worker and
process (N; off or 0 removes it), and with --rate the most started per
period (100/1s; off removes it). With the queue alone, show its limits,
its running jobs and how often each limit held workers back. A change
applies from the workers' next reserve, and lasts until a worker starts
again with EngineConfig.QueueLimits. See docs/flow-control.md.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var rate string
		var force bool
		fs.stringVar(&rate, "rate", "", "the most jobs started per period, N/PERIOD (100/1s, 5/1m), or off", "")
		fs.meta["rate"] = "N/PERIOD"
		fs.boolVar(&force, "force", false, "set limits on a queue nothing has been dispatched to yet")
		return func(ctx context.Context, s *session) error {
			if len(s.args) == 0 {
				return usagef("name the queue")
			}
			q := s.args[0]
			if err := runtime.ValidateQueueName(q); err != nil {
				return usagef("%s", oneLine(err))
			}
			if len(s.args) == 1 && rate == "" {
				return showLimits(ctx, s, q)
			}
			if !force {
				if err := knownQueue(ctx, s, q); err != nil {
					return err
				}
			}
			if len(s.args) == 2 {
				n, err := parseLimit(s.args[1])
				if err != nil {
					return err
				}
				if err := s.ins.SetQueueLimit(ctx, q, n); err != nil {
					return fmt.Errorf("limit %q: %w", q, err)
				}
				if n == 0 {
					fmt.Fprintf(s.out, "Queue %s: no concurrency limit.\n", q)
				} else {
					fmt.Fprintf(s.out, "Queue %s: at most %d %s at once.\n", q, n, plural(int64(n), "job"))
				}
			}
			if rate != "" {
				n, per, err := parseRate(rate)
				if err != nil {
					return err
				}
				if err := s.ins.SetQueueRate(ctx, q, n, per); err != nil {
					return fmt.Errorf("rate of %q: %w", q, err)
				}
				if n == 0 {
					fmt.Fprintf(s.out, "Queue %s: no rate.\n", q)
				} else {
					fmt.Fprintf(s.out, "Queue %s: at most %d %s started per %v.\n", q, n, plural(int64(n), "job"), per)
				}
			}
			return nil
		}
	},
}

// knownQueue refuses a queue that nothing has been dispatched to under
// the prefix: most often a misspelt name, whose limit would hold no job
// back.
func knownQueue(ctx context.Context, s *session, q string) error {
	known, err := s.ins.Queues(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(known, q) {
		return nil
	}
	list := "none yet"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return usagef("nothing has been dispatched to queue %q under prefix %q (known queues: %s): check the name and --prefix, or pass --force to set its limits before its first job", q, s.engine.Config().Prefix, list)
}

// parseLimit reads a concurrency limit: N, or off.
func parseLimit(s string) (int, error) {
	if s == "off" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err == nil && n < 0 {
		return 0, usagef("the limit (%d) must not be negative: give the most jobs to run at once (1 or more), or off to remove the limit", n)
	}
	if err != nil {
		return 0, usagef("the limit must be a whole number of jobs, or off; got %q", s)
	}
	return n, nil
}

// parseRate reads a rate: N/PERIOD, or off.
func parseRate(s string) (int, time.Duration, error) {
	if s == "off" || s == "0" {
		return 0, 0, nil
	}
	count, period, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 0 {
		return 0, 0, usagef("--rate must be N/PERIOD, such as 100/1s, or off; got %q", s)
	}
	per, err := time.ParseDuration(period)
	if err != nil {
		return 0, 0, usagef("--rate must be N/PERIOD, such as 100/1s, or off; got %q: %v", s, err)
	}
	return n, per, nil
}

// showLimits prints a queue's limits and what they did.
func showLimits(ctx context.Context, s *session, q string) error {
	l, err := s.ins.QueueLimits(ctx, q)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Queue %s\n", q)
	fmt.Fprintf(s.out, "  running:  %d\n", l.Running)
	fmt.Fprintf(s.out, "  limit:    %s\n", limitText(l.QueueLimit))
	fmt.Fprintf(s.out, "  rate:     %s\n", rateText(l.QueueLimit))
	fmt.Fprintf(s.out, "  held back by the limit %d %s, by the rate %d %s\n",
		l.HeldByLimit, plural(l.HeldByLimit, "time"), l.HeldByRate, plural(l.HeldByRate, "time"))
	return nil
}

func limitText(l runtime.QueueLimit) string {
	if l.Concurrency == 0 {
		return "none"
	}
	return strconv.Itoa(l.Concurrency)
}

func rateText(l runtime.QueueLimit) string {
	if l.Rate == 0 {
		return "none"
	}
	return fmt.Sprintf("%d/%v", l.Rate, l.Per)
}

// monitorLimits prints a line for each of qs that has flow limits.
func (s *session) monitorLimits(ctx context.Context, qs []string) error {
	for _, q := range qs {
		l, err := s.ins.QueueLimits(ctx, q)
		if err != nil {
			return err
		}
		if l.Concurrency == 0 && l.Rate == 0 {
			continue
		}
		fmt.Fprintf(s.out, "Queue %s: %d running, limit %s, rate %s; held back by the limit %d %s, by the rate %d %s.\n",
			q, l.Running, limitText(l.QueueLimit), rateText(l.QueueLimit),
			l.HeldByLimit, plural(l.HeldByLimit, "time"), l.HeldByRate, plural(l.HeldByRate, "time"))
	}
	return nil
}

// monitorGroups prints a line for each of qs that holds grouped jobs:
// the jobs waiting in groups, the groups whose turn it is, and the
// groups with most waiting.
func (s *session) monitorGroups(ctx context.Context, qs []string) error {
	for _, q := range qs {
		g, err := s.ins.Groups(ctx, q, 3)
		if err != nil {
			return err
		}
		if g.Waiting == 0 && len(g.Groups) == 0 {
			continue
		}
		var top []string
		for _, gi := range g.Groups[:min(3, len(g.Groups))] {
			t := fmt.Sprintf("%s %d waiting", gi.Name, gi.Waiting)
			if gi.Running > 0 {
				t += fmt.Sprintf(", %d running", gi.Running)
			}
			if gi.Parked {
				t += " (at its limit)"
			}
			top = append(top, t)
		}
		fmt.Fprintf(s.out, "Queue %s: %d %s waiting in groups, %d %s on the ring; %s.\n",
			q, g.Waiting, plural(g.Waiting, "job"), g.Turns, plural(g.Turns, "group"), strings.Join(top, "; "))
	}
	return nil
}
