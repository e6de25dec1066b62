package runtime

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// warnIfEvicting logs a warning when a Redis server of the engine may
// evict keys under memory pressure: an evicted job is lost without a
// trace. Only noeviction is safe; the volatile-* policies are safe too
// while no job key has a TTL, but are reported as well. A server that
// refuses CONFIG GET (many managed services) is not checked.
func (w *Worker) warnIfEvicting(ctx context.Context) {
	check := func(ctx context.Context, c redis.UniversalClient) {
		v, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		if err != nil {
			return
		}
		if p := v["maxmemory-policy"]; p != "" && p != "noeviction" {
			w.log.Warn("Redis may evict keys under memory pressure, and an evicted job is lost: set maxmemory-policy to noeviction",
				"maxmemory-policy", p, "volatile", strings.HasPrefix(p, "volatile-"))
		}
	}
	if cc, ok := w.e.rdb.(*redis.ClusterClient); ok {
		_ = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			check(ctx, c)
			return nil
		})
		return
	}
	check(ctx, w.e.rdb)
}
