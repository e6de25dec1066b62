package eviction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jobgen/jobgen/internal/rdb"
)

// ErrEvicting is wrapped by Check's refusal (runtime.ErrEvicting).
var ErrEvicting = errors.New("jobgen: Redis may evict keys")

// Evicts reports whether a maxmemory-policy may evict jobgen's keys:
// any but noeviction ("" is one not known). The volatile-* policies
// evict keys with a TTL, and chain markers, batch records and unique
// locks carry one.
func Evicts(policy string) bool { return policy != "" && policy != "noeviction" }

// Policies reads maxmemory-policy from every server: *rdb.Store is one.
type Policies interface {
	Policies(ctx context.Context) []rdb.Policy
}

// Check refuses a Redis that may evict jobgen's keys, unless allow; with
// allow it logs the risk once to log. A server that refuses CONFIG GET
// is not checked, and said so to log if it is not nil.
func Check(ctx context.Context, store Policies, allow bool, log *slog.Logger) error {
	for _, p := range store.Policies(ctx) {
		evicts := Evicts(p.Policy)
		switch {
		case p.Refused != nil:
			if log != nil {
				log.Info("could not read Redis's maxmemory-policy (CONFIG refused, as on many managed services): make sure it is noeviction, or jobs may be lost under memory pressure",
					"redis", p.Addr, "err", p.Refused)
			}
		case evicts && !allow:
			return fmt.Errorf("%w: the Redis at %s has maxmemory-policy %s, under which it drops keys when memory runs short, and a dropped job is lost without a trace; set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf), or set EngineConfig.AllowEviction (queue:work --allow-eviction) to accept the risk",
				ErrEvicting, p.Addr, p.Policy)
		case evicts && log != nil:
			log.Warn("Redis may evict keys under memory pressure, and an evicted job is lost; running anyway, as EngineConfig.AllowEviction says: set maxmemory-policy to noeviction",
				"redis", p.Addr, "maxmemory-policy", p.Policy, "volatile", strings.HasPrefix(p.Policy, "volatile-"))
		}
	}
	return nil
}
