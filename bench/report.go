package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WriteJSON writes rec as one JSON line.
func WriteJSON(w io.Writer, rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// metric is one row of the table: a figure of one phase.
type metric struct {
	phase  string
	name   string
	unit   string
	higher bool // higher is better
	value  func(Record) (float64, bool)
	// target describes jobgen's target; check says whether jobgen's
	// record meets it, given its value and its ratio to the best peer
	// (0 if none).
	target string
	check  func(rec Record, v, ratio float64, cfg Config) bool
}

func lat(f func(*Latency) float64) func(Record) (float64, bool) {
	return func(r Record) (float64, bool) {
		if r.Latency == nil {
			return 0, false
		}
		return f(r.Latency), true
	}
}

func rssOf(f func(*RSS) float64) func(Record) (float64, bool) {
	return func(r Record) (float64, bool) {
		if r.RSS == nil {
			return 0, false
		}
		return f(r.RSS), true
	}
}

func perSec(r Record) (float64, bool) { return r.JobsPerSec, r.JobsPerSec > 0 }

func redisCPU(r Record) (float64, bool)  { return r.RedisCPUPerJob, r.RedisCPUPerJob > 0 }
func clientCPU(r Record) (float64, bool) { return r.ClientCPUPerJob, r.ClientCPUPerJob > 0 }

var metrics = []metric{
	{phase: PhaseEnqueue, name: "enqueue, single dispatch", unit: "jobs/s", higher: true, value: perSec,
		target: "≥ 1.0× best peer", check: func(_ Record, _, ratio float64, _ Config) bool { return ratio >= 1 }},
	{phase: PhaseEnqueue, name: "Redis memory per waiting job", unit: "B", value: func(r Record) (float64, bool) {
		return r.RedisBytesPerJob, r.RedisBytesPerJob != 0
	}, target: "≤ payload + 150 B", check: func(_ Record, v, _ float64, cfg Config) bool { return v <= float64(cfg.Payload+150) }},
	{phase: PhaseEnqueue, name: "enqueue: Redis CPU per job", unit: "µs", value: redisCPU},
	{phase: PhaseEnqueue, name: "enqueue: client CPU per job", unit: "µs", value: clientCPU},
	{phase: PhaseDrain, name: "drain", unit: "jobs/s", higher: true, value: perSec,
		target: "≥ 2.4× best peer", check: func(_ Record, _, ratio float64, _ Config) bool { return ratio >= 2.4 }},
	{phase: PhaseDrain, name: "drain: Redis CPU per job", unit: "µs", value: redisCPU},
	{phase: PhaseDrain, name: "drain: client CPU per job", unit: "µs", value: clientCPU},
	{phase: PhaseMixed, name: "mixed (producers + workers)", unit: "jobs/s", higher: true, value: perSec},
	{phase: PhaseMixed, name: "mixed: pickup latency p50", unit: "ms", value: lat(func(l *Latency) float64 { return l.P50 })},
	{phase: PhaseMixed, name: "mixed: pickup latency p99", unit: "ms", value: lat(func(l *Latency) float64 { return l.P99 })},
	{phase: PhaseBulk, name: "bulk enqueue", unit: "jobs/s", higher: true, value: perSec,
		target: "≥ 450,000 jobs/s", check: func(_ Record, v, _ float64, _ Config) bool { return v >= 450_000 }},
	{phase: PhaseLatency, name: "pickup latency p50", unit: "ms", value: lat(func(l *Latency) float64 { return l.P50 }),
		target: "≤ best peer", check: func(_ Record, _, ratio float64, _ Config) bool { return ratio <= 1 }},
	{phase: PhaseLatency, name: "pickup latency p90", unit: "ms", value: lat(func(l *Latency) float64 { return l.P90 })},
	{phase: PhaseLatency, name: "pickup latency p99", unit: "ms", value: lat(func(l *Latency) float64 { return l.P99 }),
		target: "≤ best peer", check: func(_ Record, _, ratio float64, _ Config) bool { return ratio <= 1 }},
	{phase: PhaseLatency, name: "pickup latency max", unit: "ms", value: lat(func(l *Latency) float64 { return l.Max })},
	{phase: PhaseDelayed, name: "delayed: lateness min", unit: "ms", value: lat(func(l *Latency) float64 { return l.Min })},
	{phase: PhaseDelayed, name: "delayed: lateness p50", unit: "ms", value: lat(func(l *Latency) float64 { return l.P50 })},
	{phase: PhaseDelayed, name: "delayed: lateness p99", unit: "ms", value: lat(func(l *Latency) float64 { return l.P99 }),
		target: "≤ 10 ms", check: func(_ Record, v, _ float64, _ Config) bool { return v <= 10 }},
	{phase: PhaseDelayed, name: "delayed: lateness max", unit: "ms", value: lat(func(l *Latency) float64 { return l.Max }),
		target: "≤ 10 ms", check: func(_ Record, v, _ float64, _ Config) bool { return v <= 10 }},
	{phase: PhaseRSS, name: "worker RSS, after 5% of jobs", unit: "MB", value: rssOf(func(s *RSS) float64 { return s.StartMB })},
	{phase: PhaseRSS, name: "worker RSS, at the end", unit: "MB", value: rssOf(func(s *RSS) float64 { return s.EndMB }),
		target: "flat (end ≤ start + 10%)", check: func(rec Record, _, _ float64, _ Config) bool { return rec.RSS.Flat }},
	{phase: PhaseRSS, name: "worker RSS, max", unit: "MB", value: rssOf(func(s *RSS) float64 { return s.MaxMB })},
	{phase: PhaseRSS, name: "rss phase drain", unit: "jobs/s", higher: true, value: perSec},
}

// WriteTable writes a Markdown table of recs: one row per figure, one
// column per system. Each figure is followed by its ratio to the best
// peer's (the best of the systems other than jobgen; only runs with no
// duplicates and no missing jobs count as best). A trailing "!" marks an
// incomplete run. The last columns give jobgen's target and whether it
// was met.
func WriteTable(w io.Writer, cfg Config, recs []Record) error {
	cfg.setDefaults()
	t := table{cfg: cfg, recs: recs}
	for _, name := range cfg.Systems {
		if slices.ContainsFunc(recs, func(r Record) bool { return r.System == name }) {
			t.systems = append(t.systems, name)
		}
	}
	var b strings.Builder
	t.writeHeader(&b)
	for _, m := range metrics {
		if r, ok := t.figures(m); ok {
			t.writeRow(&b, m, r)
		}
	}
	b.WriteString("\nEach figure is followed by its ratio to the best peer's (for jobs/s, higher is better; for ms, µs, B and MB, lower is better). ! marks a run with duplicate or missing jobs or errors.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// table is what WriteTable works from.
type table struct {
	cfg  Config
	recs []Record
	// systems are those of cfg.Systems that have records, in that order:
	// the table's columns.
	systems []string
}

// find returns the record of system for phase.
func (t *table) find(system, phase string) (Record, bool) {
	for _, r := range t.recs {
		if r.System == system && r.Phase == phase {
			return r, true
		}
	}
	return Record{}, false
}

func (t *table) writeHeader(b *strings.Builder) {
	b.WriteString("| figure | unit |")
	for _, s := range t.systems {
		fmt.Fprintf(b, " %s |", s)
	}
	b.WriteString(" jobgen target | met |\n|---|---|")
	for range t.systems {
		b.WriteString("---:|")
	}
	b.WriteString("---|---|\n")
}

// figures are one metric's values, by system, and the best peer's.
type figures struct {
	vals     map[string]float64
	complete map[string]bool // whether the system's run was complete
	best     float64
	haveBest bool
}

// figures returns m's figures, or false if no system has one.
func (t *table) figures(m metric) (figures, bool) {
	f := figures{vals: map[string]float64{}, complete: map[string]bool{}}
	for _, s := range t.systems {
		if r, ok := t.find(s, m.phase); ok {
			if v, ok := m.value(r); ok {
				f.vals[s], f.complete[s] = v, r.Complete
			}
		}
	}
	if len(f.vals) == 0 {
		return f, false
	}
	for s, v := range f.vals {
		if s == jobgenInfo.Name || !f.complete[s] {
			continue
		}
		if !f.haveBest || (m.higher && v > f.best) || (!m.higher && v < f.best) {
			f.best, f.haveBest = v, true
		}
	}
	return f, true
}

// writeRow writes m's row: a cell per system, then jobgen's target and
// whether it was met.
func (t *table) writeRow(b *strings.Builder, m metric, f figures) {
	fmt.Fprintf(b, "| %s | %s |", m.name, m.unit)
	for _, s := range t.systems {
		fmt.Fprintf(b, " %s |", f.cell(s, m.unit))
	}
	target := m.target
	if strings.Contains(target, "payload") {
		target = fmt.Sprintf("≤ %d B (payload + 150)", t.cfg.Payload+150)
	}
	fmt.Fprintf(b, " %s | %s |\n", target, t.met(m, f))
}

// cell is system s's figure with its ratio to the best peer's, "!" if its
// run was incomplete, or "–" if it has none.
func (f figures) cell(s, unit string) string {
	v, ok := f.vals[s]
	if !ok {
		return "–"
	}
	cell := formatValue(v, unit)
	if r, ok := ratio(v, f.best, f.haveBest); ok {
		cell += fmt.Sprintf(" (%s×)", formatRatio(r))
	}
	if !f.complete[s] {
		cell += " !"
	}
	return cell
}

// met says whether jobgen met m's target: "yes", "no", "no peer" when the
// target is relative to a best peer there is none of, or "" when jobgen
// has no figure or m no target.
func (t *table) met(m metric, f figures) string {
	v, ok := f.vals[jobgenInfo.Name]
	if !ok || m.check == nil {
		return ""
	}
	r, _ := ratio(v, f.best, f.haveBest)
	rec, _ := t.find(jobgenInfo.Name, m.phase)
	ok = m.check(rec, v, r, t.cfg)
	switch {
	case strings.Contains(m.target, "best peer") && !f.haveBest:
		return "no peer"
	case ok:
		return "yes"
	}
	return "no"
}

// ratio is v over best, when both are positive.
func ratio(v, best float64, haveBest bool) (float64, bool) {
	if !haveBest || v <= 0 || best <= 0 {
		return 0, false
	}
	return v / best, true
}

func formatRatio(r float64) string {
	switch {
	case r >= 100:
		return strconv.FormatFloat(r, 'f', 0, 64)
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

func formatValue(v float64, unit string) string {
	switch unit {
	case "jobs/s", "B":
		return thousands(int64(math.Round(v)))
	case "MB", "µs":
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
