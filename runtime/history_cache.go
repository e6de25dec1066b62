package runtime

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

// historySettle is how long after its span ends a hash is taken as
// final: workers write their counts within their monitor period, and
// their clocks may be a little behind the reader's.
const historySettle = 10 * time.Minute

// closedHashes are the hashes of ended spans, by key.
type closedHashes struct {
	mu sync.Mutex
	m  map[string]closedHash
}

type closedHash struct {
	fields map[string]string
	until  time.Time // dropped after: the key itself has expired by then
}

// readHistory reads the hashes keys, those whose span ended before
// settled[k] from the cache when it has them. sameSlot says that keys
// share a cluster slot: then a first read checks, in one command,
// whether any of the ended ones exists at all, and an empty history
// costs that one command.
func (e *Engine) readHistory(ctx context.Context, keys []string, settled []bool, keep time.Duration, sameSlot bool) ([]map[string]string, error) {
	c := e.history
	now := time.Now()
	out := make([]map[string]string, len(keys))
	var read []int
	var unseenSettled []string
	c.mu.Lock()
	for k, key := range keys {
		if h, ok := c.m[key]; ok && settled[k] {
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
		n, err := e.store.CountExisting(ctx, unseenSettled)
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
		hashes, err := e.store.Hashes(ctx, ask)
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
