package runpool

// growStack makes the calling goroutine's stack at least stackReserve
// bytes deep, at once. A job runs on two goroutines of its own (process,
// and the handler's in attempt), whose calls go deep (decoding, Redis,
// the handler); Go starts a goroutine on a small stack and copies it to
// one twice the size each time a call needs more, which a drain
// profile showed as a fifth of the worker's CPU. Grown first, while the
// stack is nearly empty, the stack is copied once and cheaply. The
// returned byte means nothing; returning it keeps the frame.
//
//go:noinline
func growStack() byte {
	var frame [stackReserve]byte
	frame[stackTouch] = 1
	return frame[stackTouch]
}

// stackReserve is the stack a job's goroutines get up front.
const stackReserve = 7 << 10

// stackTouch is read at run time, so that the compiler keeps growStack's
// frame.
var stackTouch = stackReserve - 1
