package rdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// What each server that holds the keys says of its memory: each master
// of a cluster, else the one server. A server is named by its address,
// "redis" when the client does not tell it, and a cluster whose masters
// could not be listed by "cluster".

// Policy is what a server says of its maxmemory-policy.
type Policy struct {
	Addr   string
	Policy string // "" when CONFIG GET is refused (many managed services)
	// Refused is why CONFIG GET was refused.
	Refused error
}

// Memory is what a server says of its memory (INFO memory).
type Memory struct {
	Addr string
	// Used is used_memory; -1 if the server does not say.
	Used int64
	// Max is maxmemory, 0 for no limit.
	Max    int64
	Policy string
	// Err is why the server could not be read at all; the fields above
	// are zero then.
	Err error
}

// nodes calls fn for each server, concurrently on a cluster, and
// returns what fn returned, and an entry from failed for an error
// listing a cluster's masters.
func nodes[T any](ctx context.Context, s *Store, fn func(ctx context.Context, c redis.Cmdable, addr string) T, failed func(error) T) []T {
	var mu sync.Mutex
	var out []T
	err := s.eachNode(ctx, func(ctx context.Context, c redis.Cmdable, addr string) error {
		if addr == "" {
			addr = "redis"
		}
		got := fn(ctx, c, addr)
		mu.Lock()
		out = append(out, got)
		mu.Unlock()
		return nil
	})
	if err != nil {
		out = append(out, failed(err))
	}
	return out
}

// Policies reads maxmemory-policy from every server.
func (s *Store) Policies(ctx context.Context) []Policy {
	return nodes(ctx, s, readPolicy, func(err error) Policy { return Policy{Addr: "cluster", Refused: err} })
}

// Memory reads INFO memory from every server.
func (s *Store) Memory(ctx context.Context) []Memory {
	return nodes(ctx, s, readMemory, func(err error) Memory { return Memory{Addr: "cluster", Err: err} })
}

// readPolicy reads the maxmemory-policy of the server c reaches.
func readPolicy(ctx context.Context, c redis.Cmdable, addr string) Policy {
	p := Policy{Addr: addr}
	v, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	switch {
	case err != nil:
		p.Refused = err
	case v["maxmemory-policy"] == "":
		p.Refused = errors.New("CONFIG GET maxmemory-policy returned nothing")
	default:
		p.Policy = v["maxmemory-policy"]
	}
	return p
}

func readMemory(ctx context.Context, c redis.Cmdable, addr string) Memory {
	m := Memory{Addr: addr, Used: -1}
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
		p := readPolicy(ctx, c, addr)
		m.Policy = p.Policy
		if infoErr != nil && p.Refused != nil {
			return Memory{Addr: addr, Err: infoErr}
		}
	}
	return m
}
