package outboxbench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteTable writes results as Markdown: a table with a column per
// system, and after each other system's column the ratio of the first
// system's figure to it (jobgen/River when jobgen ran), marked against
// the targets where it has one; then jobgen's figures that no
// peer has, the settings, where jobgen's latency went, and any notes.
func WriteTable(w io.Writer, cfg Config, results []Result) error {
	cfg.setDefaults()
	if len(results) == 0 {
		return nil
	}
	base, peers := results[0], results[1:]
	var b strings.Builder
	b.WriteString("| figure | " + base.System)
	for _, p := range peers {
		fmt.Fprintf(&b, " | %s | %s/%s", p.System, base.System, p.System)
	}
	b.WriteString(" | target |\n|---|---:")
	for range peers {
		b.WriteString("|---:|---:")
	}
	b.WriteString("|---|\n")

	perSec := func(d func(Result) time.Duration) func(Result) float64 {
		return func(r Result) float64 { return rate(cfg.Backlog, d(r)) }
	}
	msOf := func(d func(Result) time.Duration) func(Result) float64 {
		return func(r Result) float64 { return float64(d(r)) / float64(time.Millisecond) }
	}
	drain := perSec(func(r Result) time.Duration { return r.Drain })
	rows := []row{
		{name: "insert, 1 job a transaction (jobs/s)", val: func(r Result) float64 { return r.InsertOne }, format: "%.0f", min: 1},
		{name: fmt.Sprintf("insert, %d jobs a transaction (jobs/s)", cfg.Many), val: func(r Result) float64 { return r.InsertMany }, format: "%.0f", min: 1.5},
	}
	for k, rate := range cfg.Rates {
		lat := func(q func(Latency) time.Duration) func(Result) float64 {
			return msOf(func(r Result) time.Duration {
				if k >= len(r.Latency) {
					return 0
				}
				return q(r.Latency[k])
			})
		}
		var lo float64
		if rate == 100 {
			lo = 1 // the target: p50 at 100 jobs/s no more than River tuned's
		}
		rows = append(rows,
			row{name: fmt.Sprintf("commit to handler start at %d jobs/s, p50 (ms)", rate), val: lat(func(l Latency) time.Duration { return l.P50 }), format: "%.2f", max: lo},
			row{name: fmt.Sprintf("commit to handler start at %d jobs/s, p99 (ms)", rate), val: lat(func(l Latency) time.Duration { return l.P99 }), format: "%.2f"})
	}
	rows = append(rows, []row{
		{name: fmt.Sprintf("drain of a %d backlog (jobs/s)", cfg.Backlog), val: drain, format: "%.0f", min: 2},
		{name: fmt.Sprintf("backlog insert, %d a transaction (jobs/s)", cfg.Many), val: func(r Result) float64 { return r.BacklogRate }, format: "%.0f"},
	}...)
	if base.DrainFresh > 0 {
		rows = append(rows,
			row{name: "drain, jobgen on a new outbox table (jobs/s)",
				val: perSec(func(r Result) time.Duration { return r.DrainFresh }), peer: drain, format: "%.0f", min: 2},
			row{name: "drain, jobgen on a new outbox table with the claim index (jobs/s)",
				val: perSec(func(r Result) time.Duration { return r.DrainFreshIndexed }), peer: drain, format: "%.0f", min: 2})
	}
	for _, r := range rows {
		if !r.measured(results) {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s", r.name, figure(r.format, r.val(base)))
		for _, p := range peers {
			pv := r.val(p)
			if r.peer != nil {
				pv = r.peer(p)
			}
			fmt.Fprintf(&b, " | %s | %s", figure(r.format, pv), ratio(r.val(base), pv, r.min, r.max))
		}
		fmt.Fprintf(&b, " | %s |\n", r.target())
	}
	// jobgen's alone: no peer has these.
	for _, r := range []row{
		{name: "jobgen's drain apart: relay alone (jobs/s)", val: perSec(func(r Result) time.Duration { return r.Relay })},
		{name: "jobgen's drain apart: then worker alone (jobs/s)", val: perSec(func(r Result) time.Duration { return r.Worker })},
	} {
		if r.val(base) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.0f", r.name, r.val(base))
		for range peers {
			b.WriteString(" | | ")
		}
		b.WriteString(" | |\n")
	}

	fmt.Fprintf(&b, "\nSettings: %d rounds, the systems' order reversed each round; %d producers; %d bytes of filler a job. "+
		"Inserts: %v each, the best round. Latency: at each of %v jobs/s, one a transaction, for %v a system split between the rounds, "+
		"each round after %v idle, every round's jobs pooled. Drain: a backlog of %d in transactions of %d, "+
		"its table analyzed before the consumers start, the best round.\n",
		cfg.Rounds, cfg.Producers, cfg.Pad, cfg.InsertFor, cfg.Rates, cfg.LatencyFor, cfg.Warmup, cfg.Backlog, cfg.Many)
	for _, r := range results {
		for _, l := range r.Latency {
			if l.Saturated {
				fmt.Fprintf(&b, "- saturated: %s at %d jobs/s committed %.0f jobs/s, p99 %v: it did not keep up, and its latency there measures a queue\n",
					r.System, l.Rate, l.Ran, ms(l.P99))
			}
		}
	}
	for _, r := range results {
		fmt.Fprintf(&b, "- %s: %s\n", r.System, r.Settings)
	}
	for _, r := range results {
		if t := r.LatencyTrace; t != nil {
			fmt.Fprintf(&b, "\nWhere %s's commit-to-start time went, in medians: from just before Commit to the relay's wake (by LISTEN or at its cooldown) %v, "+
				"from the wake to the end of the push %v, from the push to the handler's start %v. The relay's calls, in %d passes:\n\n",
				r.System, ms(t.CommitToWake), ms(t.WakeToPushed), ms(t.PushedToStart), t.Passes)
			writeTrace(&b, t)
		}
		if t := r.RelayTrace; t != nil {
			fmt.Fprintf(&b, "\nWhere %s's relay spent its time draining the backlog alone, in %d passes:\n\n", r.System, t.Passes)
			writeTrace(&b, t)
		}
	}
	for _, r := range results {
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- note, %s: %s\n", r.System, n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// row is one figure of the table.
type row struct {
	name   string
	val    func(Result) float64
	format string
	// peer, if set, is the other systems' figure that val is set
	// against; by default val's.
	peer func(Result) float64
	// The target for the ratio: at least min, or at most max, if
	// set.
	min, max float64
}

// measured reports whether any system has the figure: phases not run
// have none.
func (r row) measured(results []Result) bool {
	for _, res := range results {
		if r.val(res) != 0 {
			return true
		}
	}
	return false
}

func (r row) target() string {
	switch {
	case r.min != 0:
		return fmt.Sprintf("≥ %.2f", r.min)
	case r.max != 0:
		return fmt.Sprintf("≤ %.2f", r.max)
	}
	return ""
}

// writeTrace writes a relay's calls, most time first: those made less
// than once in 20 passes are left out.
func writeTrace(b *strings.Builder, t *Trace) {
	b.WriteString("| call | calls a pass | mean | time a pass |\n|---|---:|---:|---:|\n")
	for _, o := range t.Ops {
		if t.Passes == 0 || o.Calls*20 < t.Passes {
			continue
		}
		perPass := float64(o.Calls) / float64(t.Passes)
		fmt.Fprintf(b, "| %s | %.2f | %v | %v |\n", o.Name, perPass, o.Mean.Round(time.Microsecond),
			time.Duration(perPass*float64(o.Mean)).Round(time.Microsecond))
	}
}

func figure(format string, v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// ratio returns a/b, marked ✓ or ✗ against the target min or max.
func ratio(a, b, lo, hi float64) string {
	if a == 0 || b == 0 {
		return "–"
	}
	x := a / b
	s := fmt.Sprintf("%.2f", x)
	switch {
	case lo != 0 && x >= lo, hi != 0 && x <= hi:
		s += " ✓"
	case lo != 0, hi != 0:
		s += " ✗"
	}
	return s
}
