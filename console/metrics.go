package console

import (
	"context"
	"fmt"
	"slices"
	"time"
)

var metricsVerb = &verb{
	name:    "queue:metrics",
	args:    "[queue...]",
	summary: "Show each job class's runtime p50/p95 and throughput",
	maxArgs: -1,
	about: `Show, for every queue or for the queues named, each job class's runtime
percentiles (p50, p95) and throughput over the last hour and the last
day, from the queues that keep finished jobs (EngineConfig.KeepFinished;
docs/results.md). Percentiles are read from a histogram, within about
10%; the last hour is the last 50 to 60 minutes.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var queues []string
		fs.queuesVar(&queues, "only these queues", "every queue")
		return func(ctx context.Context, s *session) error {
			qs, err := s.queues(ctx, slices.Concat(s.args, queues))
			if err != nil {
				return err
			}
			tw := table(s.out)
			fmt.Fprintln(tw, "QUEUE\tJOB\tHOUR JOBS\tHOUR/MIN\tHOUR P50\tHOUR P95\tDAY JOBS\tDAY/MIN\tDAY P50\tDAY P95")
			rows := 0
			for _, q := range qs {
				ms, err := s.ins.JobMetrics(ctx, q)
				if err != nil {
					return err
				}
				for _, m := range ms {
					rows++
					fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%s\t%s\t%d\t%.2f\t%s\t%s\n", q, m.Name,
						m.Hour.Jobs, m.Hour.PerMinute, ms3(m.Hour.P50, m.Hour.Jobs), ms3(m.Hour.P95, m.Hour.Jobs),
						m.Day.Jobs, m.Day.PerMinute, ms3(m.Day.P50, m.Day.Jobs), ms3(m.Day.P95, m.Day.Jobs))
				}
			}
			if rows == 0 {
				fmt.Fprintln(s.out, "No job finished in the last day on a queue that keeps finished jobs (EngineConfig.KeepFinished).")
				return nil
			}
			return tw.Flush()
		}
	},
}

// ms3 is d to three significant digits, or "-" when no job ran.
func ms3(d time.Duration, jobs int64) string {
	if jobs == 0 {
		return "-"
	}
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}
