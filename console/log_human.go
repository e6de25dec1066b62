package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// humanHandler is the slog handler of queue:work's text format: a job's
// change of state (a record with an outcome, or "job started") as the
// line queue:work has always printed,
//
//	2026-05-01 10:00:00 DONE     emails main.SendEmail 01JT... 12ms
//	2026-05-01 10:00:00 RETRY    emails main.SendEmail 01JT... attempt 1; again in 1s: smtp: refused
//	2026-05-01 10:00:00 FAILED   emails main.SendEmail 01JT... attempt 3: ...
//
// and any other record as its time, level, message and attributes.
type humanHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr // from WithAttrs, for the other records
	group string
}

func newHumanHandler(w io.Writer) *humanHandler { return &humanHandler{mu: new(sync.Mutex), w: w} }

func (h *humanHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *humanHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	for _, a := range as {
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		c.attrs = append(c.attrs[:len(c.attrs):len(c.attrs)], a)
	}
	return &c
}

func (h *humanHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

// jobRecord is what a job's log line says (runtime's worker_log.go).
type jobRecord struct {
	id, job, queue, outcome string
	attempt                 int64
	duration, delay         time.Duration
	hasDelay                bool
	err                     string
}

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	var j jobRecord
	var rest []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "id":
			j.id = a.Value.String()
		case "job":
			j.job = a.Value.String()
		case "queue":
			j.queue = a.Value.String()
		case "outcome":
			j.outcome = a.Value.String()
		case "attempt":
			j.attempt = a.Value.Int64()
		case "duration":
			j.duration = a.Value.Duration()
		case "delay":
			j.delay, j.hasDelay = a.Value.Duration(), true
		case "err":
			j.err = oneLineText(a.Value.String())
		}
		rest = append(rest, a)
		return true
	})
	var line string
	if status, detail, ok := j.status(r.Message); ok {
		line = fmt.Sprintf("%s %-8s %s %s %s %s\n", r.Time.Format(time.DateTime), status, j.queue, j.job, j.id, detail)
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %-8s %s", r.Time.Format(time.DateTime), r.Level.String(), r.Message)
		for _, a := range append(h.attrs, rest...) {
			fmt.Fprintf(&b, " %s=%s", a.Key, quoteIfSpaced(oneLineText(a.Value.String())))
		}
		line = b.String() + "\n"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// status returns the status word and detail of a job's line; ok is false
// for a record that is not one.
func (j jobRecord) status(msg string) (status, detail string, ok bool) {
	switch {
	case j.id == "" || j.job == "":
		return "", "", false
	case j.outcome == "ok":
		d := j.duration.Round(time.Millisecond)
		if d == 0 {
			d = j.duration.Round(time.Microsecond)
		}
		return "DONE", d.String(), true
	case j.outcome == "released":
		return "RELEASED", fmt.Sprintf("attempt %d; again in %v", j.attempt, j.delay), true
	case j.outcome == "error" || j.outcome == "timed_out":
		return "RETRY", fmt.Sprintf("attempt %d; again in %v: %s", j.attempt, j.delay, j.err), true
	case j.outcome == "failed":
		return "FAILED", fmt.Sprintf("attempt %d: %s", j.attempt, j.err), true
	case j.outcome == "" && msg == "job started":
		return "RUNNING", fmt.Sprintf("attempt %d", j.attempt), true
	}
	return "", "", false
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimPrefix(s, "jobgen: "), "\n", "; ")), " ")
}

func quoteIfSpaced(s string) string {
	if strings.ContainsAny(s, " \"=") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// levelFilter passes records at min or above and, if jobLines, the
// Debug lines that tell a job's outcome (not its start): queue:work's
// default, a line per finished job, as it has always printed.
type levelFilter struct {
	slog.Handler
	min      slog.Level
	jobLines bool
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return (l >= f.min || f.jobLines && l >= slog.LevelDebug) && f.Handler.Enabled(ctx, l)
}

func (f levelFilter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < f.min {
		has := false
		r.Attrs(func(a slog.Attr) bool {
			has = a.Key == "outcome"
			return !has
		})
		if !has {
			return nil
		}
	}
	return f.Handler.Handle(ctx, r)
}

func (f levelFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFilter{f.Handler.WithAttrs(as), f.min, f.jobLines}
}

func (f levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{f.Handler.WithGroup(name), f.min, f.jobLines}
}
