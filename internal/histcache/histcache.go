package histcache

import (
	"context"
	"sync"
	"time"
)

// The per-minute counts (Inspector.Metrics) are kept in a hash per hour,
// and the runtime histograms (Inspector.JobMetrics) in a hash per queue
// and ten-minute slot: a day of them is 25 hashes, or 144 per queue. A
// hash whose span ended a while ago is no longer written to, so the
// engine keeps what it read of it, and a page read again reads only the
// hashes still open: about two per queue, rather than 144.

// Settle is how long after its span ends a hash is taken as final:
// workers write their counts within their monitor period, and their
// clocks may be a little behind the reader's.
const Settle = 10 * time.Minute

// Reader reads hashes from Redis: *rdb.Store is one.
type Reader interface {
	// CountExisting returns how many of keys exist, in one command: in a
	// cluster they must share a slot.
	CountExisting(ctx context.Context, keys []string) (int64, error)
	// Hashes reads each key's hash, empty if it does not exist.
	Hashes(ctx context.Context, keys []string) ([]map[string]string, error)
}

// Cache holds the hashes of ended spans, by key. The zero value is
// empty; it is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[string]closedHash
}

type closedHash struct {
	fields map[string]string
	until  time.Time // dropped after: the key itself has expired by then
}

// Read reads the hashes keys through r, those whose span has ended
// (settled[k]) from the cache when it has them; it keeps those for keep.
// sameSlot says that keys share a cluster slot: then a first read
// checks, in one command, whether any of the ended ones exists at all,
// and an empty history costs that one command.
func (c *Cache) Read(ctx context.Context, r Reader, keys []string, settled []bool, keep time.Duration, sameSlot bool) ([]map[string]string, error) {
	now := time.Now()
	out := make([]map[string]string, len(keys))
	var read []int
	var unseenSettled []string
	c.mu.Lock()
	for k, key := range keys {
		if h, ok := c.m[key]; ok && settled[k] && !now.After(h.until) {
			out[k] = h.fields
			continue
		}
		read = append(read, k)
		if settled[k] {
			unseenSettled = append(unseenSettled, key)
		}
	}
	c.mu.Unlock()
	if len(read) == 0 {
		return out, nil
	}
	empty := false
	if sameSlot && len(unseenSettled) > 1 {
		n, err := r.CountExisting(ctx, unseenSettled)
		if err != nil {
			return nil, err
		}
		empty = n == 0
	}
	var ask []string
	var at []int
	for _, k := range read {
		if empty && settled[k] {
			out[k] = map[string]string{}
			continue
		}
		ask, at = append(ask, keys[k]), append(at, k)
	}
	if len(ask) > 0 {
		hashes, err := r.Hashes(ctx, ask)
		if err != nil {
			return nil, err
		}
		for i, h := range hashes {
			out[at[i]] = h
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]closedHash{}
	}
	for key, h := range c.m {
		if now.After(h.until) {
			delete(c.m, key)
		}
	}
	for _, k := range read {
		if settled[k] {
			c.m[keys[k]] = closedHash{fields: out[k], until: now.Add(keep)}
		}
	}
	return out, nil
}
