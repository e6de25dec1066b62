package laravel

import (
	"context"
)

// pausedQueues returns the queues of the worker that Laravel's
// queue:pause has paused (Laravel 12 and later; QueueManager::pause,
// pauseFor and, from 13, pauseAll), as its Worker::getNextJob skips
// them: the cache keys illuminate:queue:paused:CONNECTION:QUEUE and
// illuminate:queues:paused. It returns nil before 12, without a cache
// prefix, or when the keys cannot be read (a worker that cannot tell
// goes on, as Laravel's does without a cache).
func (w *Worker) pausedQueues(ctx context.Context) map[string]bool {
	if w.q.cfg.major() < 12 || w.q.cfg.CachePrefix == "" {
		return nil
	}
	keys := []string{w.q.cfg.CachePrefix + "illuminate:queues:paused"}
	for _, q := range w.cfg.Queues {
		keys = append(keys, w.q.cfg.CachePrefix+"illuminate:queue:paused:"+w.q.cfg.connection()+":"+q)
	}
	vals, err := w.q.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil
	}
	paused := map[string]bool{}
	for i, q := range w.cfg.Queues {
		if cacheTrue(vals[0]) || cacheTrue(vals[i+1]) {
			paused[q] = true
		}
	}
	return paused
}

// cacheTrue reports whether a value of Laravel's Redis cache store is
// truthy: serialize(true) is "b:1;"; a number is kept bare.
func cacheTrue(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	switch s {
	case "", "0", "b:0;", "N;", `s:0:"";`:
		return false
	}
	return true
}

// connection is the connection's name in config/queue.php, "redis" by
// default.
func (c Config) connection() string {
	if c.Connection == "" {
		return "redis"
	}
	return c.Connection
}
