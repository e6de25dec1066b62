package console

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// newerWindow is how far back queue:monitor looks for jobs that workers
// gave back because their schema version is newer than they know.
const newerWindow = time.Minute

// monitorNewer prints a line for each job name and schema version of qs
// that workers gave back in the last newerWindow because they know only
// older versions (docs/changing-jobs.md), and, when alert is set,
// returns an alert for each. During a rolling deploy such lines come and
// go; one that stays means no worker of that version runs.
func (s *session) monitorNewer(ctx context.Context, qs []string, alert bool) ([]string, error) {
	waiting, err := s.ins.WaitingForNewer(ctx, newerWindow)
	if err != nil {
		return nil, fmt.Errorf("read the jobs waiting for a newer worker: %w", err)
	}
	var alerts []string
	for _, w := range waiting {
		if !slices.Contains(qs, w.Queue) {
			continue
		}
		fmt.Fprintf(s.out, "Queue %s: jobs of %s version %d wait for a newer worker: given back %d %s in the last minute by workers that know up to version %d.\n",
			w.Queue, w.Name, w.Version, w.GivenBack, plural(w.GivenBack, "time"), w.Known)
		if alert {
			alerts = append(alerts, fmt.Sprintf("%s (jobs of %s version %d wait for a worker that knows it)", w.Queue, w.Name, w.Version))
		}
	}
	return alerts, nil
}
