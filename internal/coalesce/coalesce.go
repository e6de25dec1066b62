package coalesce

import "context"

// Take appends to buf what in holds, without blocking, until buf holds
// max items. open is false if it found in closed; what it took before
// is in out.
func Take[T any](in <-chan T, buf []T, max int) (out []T, open bool) {
	for len(buf) < max {
		select {
		case it, ok := <-in:
			if !ok {
				return buf, false
			}
			buf = append(buf, it)
		default:
			return buf, true
		}
	}
	return buf, true
}

// Loop calls flush with what in brings, each call with what queued up
// while the previous one was out, up to max items. When stop closes it
// flushes what is queued, then closes done and returns.
func Loop[T any](ctx context.Context, in <-chan T, stop <-chan struct{}, done chan<- struct{}, max int, flush func(context.Context, []T)) {
	defer close(done)
	buf := make([]T, 0, max)
	for {
		select {
		case it := <-in:
			b, _ := Take(in, append(buf[:0], it), max)
			flush(ctx, b)
		case <-stop:
			for b, _ := Take(in, buf[:0], max); len(b) > 0; b, _ = Take(in, buf[:0], max) {
				flush(ctx, b)
			}
			return
		}
	}
}

// Hand gives it to the Loop reading in, or, if that Loop has ended
// (done is closed), flushes it alone at once.
func Hand[T any](ctx context.Context, in chan<- T, done <-chan struct{}, it T, flush func(context.Context, []T)) {
	select {
	case in <- it:
	case <-done:
		flush(ctx, []T{it})
	}
}
