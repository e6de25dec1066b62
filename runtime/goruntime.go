package runtime

import (
	goruntime "runtime"
	"runtime/debug"
)

// This package is named runtime, as the design card names it; the
// standard library's runtime is reached here alone, under goruntime, and
// the rest of the package calls these.

// callers is the standard library's runtime.Callers.
func callers(skip int, pc []uintptr) int { return goruntime.Callers(skip+1, pc) }

// callersFrames is the standard library's runtime.CallersFrames.
func callersFrames(pcs []uintptr) *goruntime.Frames { return goruntime.CallersFrames(pcs) }

// gosched is the standard library's runtime.Gosched.
func gosched() { goruntime.Gosched() }

// stack is runtime/debug.Stack: the calling goroutine's stack trace.
func stack() []byte { return debug.Stack() }
