package schedule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// errSpec is wrapped by every error of parseSpec.
var errSpec = errors.New("invalid schedule spec")

// spec is when an entry runs: the instants of its ticks.
type spec interface {
	// Next returns the first tick strictly after t, or the zero time if
	// there is none.
	Next(t time.Time) time.Time
	// Prev returns the last tick at or before t, or the zero time if
	// there is none.
	Prev(t time.Time) time.Time
	// String returns the spec as written, with its zone if not UTC.
	String() string
}

// parseSpec reads expr in loc (nil means UTC): a cron expression of five
// fields, or six with seconds first; a tag such as @daily; or
// @every DURATION, a whole number of seconds, which counts real time and
// ignores loc.
func parseSpec(expr string, loc *time.Location) (spec, error) {
	if loc == nil {
		loc = time.UTC
	}
	expr = strings.Join(strings.Fields(expr), " ")
	if d, ok := strings.CutPrefix(expr, "@every "); ok {
		every, err := time.ParseDuration(d)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", errSpec, expr, err)
		}
		return newEvery(every)
	}
	fields := strings.Fields(expr)
	switch {
	case strings.HasPrefix(expr, "@"):
		switch expr {
		case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
		default:
			return nil, fmt.Errorf("%w: unknown tag %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every DURATION)", errSpec, expr)
		}
		if expr == "@midnight" {
			expr = "@daily"
		}
	case len(fields) == 5 || len(fields) == 6:
		if len(fields) == 6 && len(fields[5]) >= 4 && fields[5][0] >= '0' && fields[5][0] <= '9' {
			// gronx would read a four-digit sixth field as a year.
			return nil, fmt.Errorf("%w: %q: six fields are seconds, minutes, hours, day of month, month, day of week", errSpec, expr)
		}
	default:
		return nil, fmt.Errorf("%w: %q has %d fields: want 5 (minute hour day month weekday) or 6 (seconds first)", errSpec, expr, len(fields))
	}
	if !gronx.IsValid(expr) {
		return nil, fmt.Errorf("%w: %q is not a valid cron expression", errSpec, expr)
	}
	c := &cronSpec{expr: expr, loc: loc}
	// A spec with no tick at all (30 February) would make every search
	// fail: refuse it now.
	if c.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("%w: %q never fires", errSpec, expr)
	}
	return c, nil
}

// cronSpec is a cron expression read on the wall clock of loc.
type cronSpec struct {
	expr string
	loc  *time.Location
}

func (c *cronSpec) String() string {
	if c.loc == time.UTC {
		return c.expr
	}
	return c.expr + " " + c.loc.String()
}

// Next finds the first wall tick after t's wall time whose instant is
// after t. Wall ticks map to instants monotonically (see instant), so
// the search only passes over ticks of a repeated hour that ran already.
func (c *cronSpec) Next(t time.Time) time.Time {
	w := naive(t.Truncate(time.Second), c.loc)
	for range 100_000 {
		n, err := gronx.NextTickAfter(c.expr, w, false)
		if err != nil || !n.After(w) {
			return time.Time{}
		}
		if in := instant(n, c.loc); in.After(t) {
			return in
		}
		w = n
	}
	return time.Time{}
}

// Prev finds the last wall tick at or before t's wall time, then moves
// on while the next tick's instant is still not after t: the ticks of a
// repeated hour map to its first occurrence, before t.
func (c *cronSpec) Prev(t time.Time) time.Time {
	w, err := gronx.PrevTickBefore(c.expr, naive(t.Truncate(time.Second), c.loc), true)
	if err != nil {
		return time.Time{}
	}
	p := instant(w, c.loc)
	if p.After(t) {
		return time.Time{}
	}
	for {
		n := c.Next(p)
		if n.IsZero() || n.After(t) {
			return p
		}
		p = n
	}
}

// everySpec is a spec that fires every d of real time, at the multiples of d
// since the Unix epoch.
type everySpec struct{ d time.Duration }

// newEvery returns the spec of @every d; d must be a whole number of
// seconds, at least one.
func newEvery(d time.Duration) (everySpec, error) {
	if d < time.Second || d%time.Second != 0 {
		return everySpec{}, fmt.Errorf("%w: @every %v: want a whole number of seconds, at least 1s", errSpec, d)
	}
	return everySpec{d}, nil
}

// String is "@every" and the interval in its largest whole unit: 90s,
// 5m, 2h. It names entries, so it must not change between releases.
func (e everySpec) String() string {
	switch {
	case e.d%time.Hour == 0:
		return "@every " + strconv.FormatInt(int64(e.d/time.Hour), 10) + "h"
	case e.d%time.Minute == 0:
		return "@every " + strconv.FormatInt(int64(e.d/time.Minute), 10) + "m"
	}
	return "@every " + strconv.FormatInt(int64(e.d/time.Second), 10) + "s"
}

// Next returns the first multiple of the interval after t.
func (e everySpec) Next(t time.Time) time.Time { return e.Prev(t).Add(e.d) }

// Prev returns the last multiple of the interval at or before t.
func (e everySpec) Prev(t time.Time) time.Time {
	n := t.UnixNano()
	d := int64(e.d)
	q := n / d
	if n < 0 && n%d != 0 {
		q--
	}
	return time.Unix(0, q*d).UTC()
}
