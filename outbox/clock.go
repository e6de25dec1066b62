package outbox

import (
	"context"
	"sync"
	"time"

	"github.com/jobgen/jobgen/internal/rdb"
)

// offsetClock reads the Redis clock through a local one: it reads TIME
// again every 10 s, and in between adds the time passed on the local
// monotonic clock. A claim's deadline counts from it; an error of a few
// µs over 10 s is far inside the grace a released mark keeps.
type offsetClock struct {
	mu    sync.Mutex
	base  time.Time // Redis time at read
	local time.Time // local time at read, with its monotonic reading
}

const offsetClockEvery = 10 * time.Second

func (c *offsetClock) now(ctx context.Context, s *rdb.Store) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.local.IsZero() || time.Since(c.local) > offsetClockEvery {
		sent := time.Now()
		t, err := s.Time(ctx)
		if err != nil {
			return time.Time{}, err
		}
		// The reply was made between sent and now: take the earliest
		// reading, so that a deadline is never later than it should be.
		c.base, c.local = t, sent
	}
	return c.base.Add(time.Since(c.local)), nil
}
