package load

import (
	"cmp"
	"fmt"
	"go/token"
	"slices"
	"strings"
)

// Error is one problem in the loaded source, at a position.
type Error struct {
	// Pos is where the problem is; Filename is absolute, as the go
	// command reports it. It is the zero Position for a problem with a
	// package as a whole, such as a pattern that matches nothing.
	Pos token.Position
	// Msg says what is wrong.
	Msg string
}

// Error returns "file:line:column: message".
func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		return e.Msg
	}
	return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
}

// List is every problem found, in source order. Load returns one when
// anything is wrong, so that all problems are reported at once.
type List []*Error

// Error returns the problems one per line.
func (l List) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the problems, so errors.As finds each *Error.
func (l List) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

func (l *List) add(pos token.Position, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (l List) sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
		)
	})
}
