package runtime

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ServerMemory is what one Redis server says of its memory (INFO
// memory): each master of a cluster, or the one server.
type ServerMemory struct {
	// Addr is the server's address.
	Addr string
	// Used is used_memory, in bytes; -1 if the server does not say
	// (INFO memory refused, as by an embedded server).
	Used int64
	// Max is maxmemory, in bytes; 0 means no limit.
	Max int64
	// Policy is maxmemory_policy; anything but noeviction may evict
	// jobgen's keys (ErrEvicting).
	Policy string
	// Err is why the server could not be read at all; the fields above
	// are zero then.
	Err error
}

// Evicts reports whether the server's policy may evict jobgen's keys.
func (m ServerMemory) Evicts() bool { return m.Policy != "" && m.Policy != "noeviction" }

// Memory reads INFO memory from every server that holds the engine's
// keys. A server that cannot be read comes with its Err.
func (i *Inspector) Memory(ctx context.Context) []ServerMemory {
	cc, ok := i.e.rdb.(*redis.ClusterClient)
	if !ok {
		addr := "redis"
		if c, ok := i.e.rdb.(*redis.Client); ok {
			addr = c.Options().Addr
		}
		return []ServerMemory{readMemory(ctx, i.e.rdb, addr)}
	}
	var mu sync.Mutex
	var out []ServerMemory
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		got := readMemory(ctx, m, m.Options().Addr)
		mu.Lock()
		out = append(out, got)
		mu.Unlock()
		return nil
	})
	if err != nil {
		out = append(out, ServerMemory{Addr: "cluster", Err: err})
	}
	return out
}

func readMemory(ctx context.Context, c redis.Cmdable, addr string) ServerMemory {
	m := ServerMemory{Addr: addr, Used: -1}
	info, infoErr := c.Info(ctx, "memory").Result()
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "used_memory":
			m.Used, _ = strconv.ParseInt(v, 10, 64)
		case "maxmemory":
			m.Max, _ = strconv.ParseInt(v, 10, 64)
		case "maxmemory_policy":
			m.Policy = v
		}
	}
	if m.Policy == "" {
		// INFO without the policy (an embedded server): ask CONFIG.
		p := readEvictionPolicy(ctx, c, addr)
		m.Policy = p.policy
		if infoErr != nil && p.refused != nil {
			return ServerMemory{Addr: addr, Err: infoErr}
		}
	}
	return m
}
