package console

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// waitLimits is queue:monitor's --max-wait: how long the oldest ready
// job of a queue may have waited, for every queue ("5m") or for the
// queues named ("emails=5m,reports=1h"), as Horizon's long-wait
// notifications have a threshold per queue. A named queue's threshold
// overrides the one for all.
type waitLimits struct {
	all   time.Duration
	named map[string]time.Duration
	order []string // the named queues, in the order given
}

// of returns the threshold of queue, 0 for none.
func (w *waitLimits) of(queue string) time.Duration {
	if d, ok := w.named[queue]; ok {
		return d
	}
	return w.all
}

func (w *waitLimits) set() bool { return w.all > 0 || len(w.named) > 0 }

func (w *waitLimits) Set(s string) error {
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, dur, named := strings.Cut(item, "=")
		if !named {
			name, dur = "", item
		}
		d, err := parseDuration(dur)
		if err != nil {
			return fmt.Errorf("%q: want a duration (5m) or QUEUE=DURATION (emails=5m): %w", item, err)
		}
		if d <= 0 {
			return fmt.Errorf("%q: the wait must be positive", item)
		}
		if !named {
			w.all = d
			continue
		}
		if err := validQueue(name); err != nil {
			return err
		}
		if w.named == nil {
			w.named = map[string]time.Duration{}
		}
		if _, dup := w.named[name]; !dup {
			w.order = append(w.order, name)
		}
		w.named[name] = d
	}
	return nil
}

func (w *waitLimits) String() string {
	if w == nil {
		return ""
	}
	var parts []string
	if w.all > 0 {
		parts = append(parts, w.all.String())
	}
	for _, q := range w.order {
		parts = append(parts, q+"="+w.named[q].String())
	}
	return strings.Join(parts, ",")
}

// waitFlag declares --max-wait on fs.
func waitFlag(fs *flags) *waitLimits {
	w := &waitLimits{}
	fs.Var(w, "max-wait", "alert when a queue's oldest ready job has waited longer: for every queue (5m) or per queue (emails=5m,reports=1h)")
	fs.add("max-wait", "no limit")
	fs.meta["max-wait"] = "[QUEUE=]DURATION"
	return w
}

// monitorWaits prints, for each of qs with a --max-wait threshold, how
// long its oldest ready job has waited, and returns an alert for each
// queue over its threshold, and for each queue named in --max-wait that
// nothing has been dispatched to (a typo would otherwise never alert).
func (s *session) monitorWaits(ctx context.Context, qs []string, w *waitLimits) ([]string, error) {
	if !w.set() {
		return nil, nil
	}
	var alerts []string
	for _, q := range w.order {
		if !slices.Contains(qs, q) {
			known, err := s.ins.Queues(ctx)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(known, q) {
				fmt.Fprintf(s.out, "Queue %s: named in --max-wait, but nothing has been dispatched to it.\n", q)
				alerts = append(alerts, fmt.Sprintf("%s (named in --max-wait, but no such queue: check its name)", q))
			}
		}
	}
	now := time.Now()
	for _, q := range qs {
		limit := w.of(q)
		if limit <= 0 {
			continue
		}
		at, ok, err := s.ins.OldestReady(ctx, q)
		if err != nil {
			return nil, err
		}
		if !ok {
			fmt.Fprintf(s.out, "Queue %s: no job waiting (--max-wait %s).\n", q, limit)
			continue
		}
		wait := max(now.Sub(at), 0).Round(time.Millisecond)
		if wait <= limit {
			fmt.Fprintf(s.out, "Queue %s: the oldest ready job has waited %s (--max-wait %s).\n", q, wait, limit)
			continue
		}
		fmt.Fprintf(s.out, "Queue %s: the oldest ready job has waited %s, more than --max-wait %s: ALERT.\n", q, wait, limit)
		alerts = append(alerts, fmt.Sprintf("%s (oldest ready job waited %s, more than %s)", q, wait, limit))
	}
	return alerts, nil
}
