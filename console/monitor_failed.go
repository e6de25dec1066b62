package console

import (
	"context"
	"fmt"
	"time"
)

// failedTrimmedFlag declares queue:monitor's --failed-trimmed-within.
func failedTrimmedFlag(fs *flags) *time.Duration {
	within := new(time.Duration)
	fs.durationVar(within, "failed-trimmed-within",
		"alert when trimming (FailedMaxCount, FailedMaxAge) dropped failed jobs of a queue within this long before now; run from cron at this interval", "no alert")
	return within
}

// monitorFailedTrimmed prints a line for each of qs whose failed store
// trimming has dropped jobs from, and returns an alert for each whose
// last trim is within the last within (0: no alerts).
func (s *session) monitorFailedTrimmed(ctx context.Context, qs []string, within time.Duration) ([]string, error) {
	trims, err := s.ins.Failed().Trimmed(ctx, qs...)
	if err != nil {
		return nil, err
	}
	var alerts []string
	now := time.Now()
	for _, t := range trims {
		if t.Count == 0 {
			continue
		}
		ago := now.Sub(t.Last).Round(time.Second)
		fmt.Fprintf(s.out, "Queue %s: %d failed %s trimmed in all (FailedMaxCount, FailedMaxAge); the last %d at %s, %s ago.\n",
			t.Queue, t.Count, plural(t.Count, "job"), t.LastCount, t.Last.UTC().Format(time.DateTime), ago)
		if within > 0 && now.Sub(t.Last) <= within {
			alerts = append(alerts, fmt.Sprintf("%s (%d failed %s trimmed %s ago, within %s)", t.Queue, t.LastCount, plural(t.LastCount, "job"), ago, within))
		}
	}
	return alerts, nil
}
