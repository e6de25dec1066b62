package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrEvicting is returned by Open, NewEngine and Worker.Run for a Redis
// whose maxmemory-policy may evict keys under memory pressure, unless
// EngineConfig.AllowEviction accepts the risk: an evicted job, chain
// marker, batch record or unique lock is lost without a trace.
var ErrEvicting = errors.New("jobgen: Redis may evict keys")

// evictionPolicy is what a server says of its maxmemory-policy.
type evictionPolicy struct {
	addr    string
	policy  string // "" when CONFIG GET is refused (many managed services)
	refused error  // why CONFIG GET was refused
}

// evicts reports whether the policy may evict jobgen's keys: any but
// noeviction. The volatile-* policies evict keys with a TTL, and chain
// markers, batch records and unique locks carry one.
func (p evictionPolicy) evicts() bool { return p.policy != "" && p.policy != "noeviction" }

// evictionPolicies reads maxmemory-policy from every server that holds
// jobgen's keys: each master of a cluster, else the one server.
func evictionPolicies(ctx context.Context, rdb redis.UniversalClient) []evictionPolicy {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		addr := "redis"
		if c, ok := rdb.(*redis.Client); ok {
			addr = c.Options().Addr
		}
		return []evictionPolicy{readEvictionPolicy(ctx, rdb, addr)}
	}
	var mu sync.Mutex
	var out []evictionPolicy
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		p := readEvictionPolicy(ctx, m, m.Options().Addr)
		mu.Lock()
		out = append(out, p)
		mu.Unlock()
		return nil
	})
	if err != nil {
		out = append(out, evictionPolicy{addr: "cluster", refused: err})
	}
	return out
}

// readEvictionPolicy reads the maxmemory-policy of the server c reaches.
func readEvictionPolicy(ctx context.Context, c redis.Cmdable, addr string) evictionPolicy {
	p := evictionPolicy{addr: addr}
	v, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	switch {
	case err != nil:
		p.refused = err
	case v["maxmemory-policy"] == "":
		p.refused = errors.New("CONFIG GET maxmemory-policy returned nothing")
	default:
		p.policy = v["maxmemory-policy"]
	}
	return p
}

// checkEviction refuses a Redis that may evict jobgen's keys, unless
// allow; with allow it logs the risk once to log. A server that refuses
// CONFIG GET is not checked, and said so to log if it is not nil.
func checkEviction(ctx context.Context, rdb redis.UniversalClient, allow bool, log *slog.Logger) error {
	for _, p := range evictionPolicies(ctx, rdb) {
		switch {
		case p.refused != nil:
			if log != nil {
				log.Info("could not read Redis's maxmemory-policy (CONFIG refused, as on many managed services): make sure it is noeviction, or jobs may be lost under memory pressure",
					"redis", p.addr, "err", p.refused)
			}
		case p.evicts() && !allow:
			return fmt.Errorf("%w: the Redis at %s has maxmemory-policy %s, under which it drops keys when memory runs short, and a dropped job is lost without a trace; set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf), or set EngineConfig.AllowEviction (queue:work --allow-eviction) to accept the risk",
				ErrEvicting, p.addr, p.policy)
		case p.evicts() && log != nil:
			log.Warn("Redis may evict keys under memory pressure, and an evicted job is lost; running anyway, as EngineConfig.AllowEviction says: set maxmemory-policy to noeviction",
				"redis", p.addr, "maxmemory-policy", p.policy, "volatile", strings.HasPrefix(p.policy, "volatile-"))
		}
	}
	return nil
}
