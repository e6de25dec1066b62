package console

import (
	"fmt"
	"io"
	"os"
)

// progress reports how far a long operation has got, on Stderr: on a
// terminal as one line redrawn in place, otherwise as a line per step.
// An operation of a single step shows nothing.
type progress struct {
	w      io.Writer
	tty    bool
	label  string
	unit   string
	total  int64
	done   int64
	active bool
}

// progress starts reporting an operation of total units. It shows
// anything only if total is more than one step of step units.
func (s *session) progress(label, unit string, total, step int64) *progress {
	return &progress{w: s.errOut, tty: isTerminal(s.errOut), label: label, unit: unit, total: total, active: total > step}
}

// add records n more units done.
func (p *progress) add(n int64) {
	p.done += n
	if !p.active || n == 0 {
		return
	}
	pct := 100
	if p.total > 0 {
		pct = int(min(100*p.done/p.total, 100))
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r%s: %d of %d %s (%d%%)", p.label, p.done, p.total, p.unit, pct)
		return
	}
	fmt.Fprintf(p.w, "%s: %d of %d %s (%d%%)\n", p.label, p.done, p.total, p.unit, pct)
}

// finish ends the progress line on a terminal. It may be called more
// than once.
func (p *progress) finish() {
	if p.active && p.tty {
		fmt.Fprintln(p.w)
	}
	p.active = false
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
