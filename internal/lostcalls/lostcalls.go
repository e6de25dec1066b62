package lostcalls

import (
	"sync"
	"sync/atomic"
	"time"
)

// Max bounds the calls a List keeps; past it the oldest is dropped.
const Max = 1024

// List holds calls of type T whose reply was lost, the oldest first.
// The zero value is empty; it is safe for concurrent use.
type List[T any] struct {
	n     atomic.Int32 // len(calls), read without mu
	mu    sync.Mutex
	calls []lost[T]
}

type lost[T any] struct {
	call T
	at   time.Time
}

// Add keeps call, made now, dropping the oldest past Max.
func (l *List[T]) Add(call T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) >= Max {
		l.calls = l.calls[1:]
	}
	l.calls = append(l.calls, lost[T]{call: call, at: time.Now()})
	l.n.Store(int32(len(l.calls)))
}

// Pending says whether the list holds any call.
func (l *List[T]) Pending() bool { return l.n.Load() > 0 }

// Recover takes the calls out and makes each again through again, which
// returns how many things it recovered. A call that fails again is kept
// for the next Recover, until window has passed since it was first made:
// then it is dropped, as the record of its first run may be gone. It
// returns the sum of what again recovered.
func (l *List[T]) Recover(window time.Duration, again func(T) (int, error)) int {
	l.mu.Lock()
	calls := l.calls
	l.calls = nil
	l.n.Store(0)
	l.mu.Unlock()
	var keep []lost[T]
	got := 0
	for _, c := range calls {
		if time.Since(c.at) >= window {
			continue
		}
		n, err := again(c.call)
		if err != nil {
			keep = append(keep, c)
			continue
		}
		got += n
	}
	if len(keep) > 0 {
		l.mu.Lock()
		l.calls = append(keep, l.calls...)
		l.n.Store(int32(len(l.calls)))
		l.mu.Unlock()
	}
	return got
}
