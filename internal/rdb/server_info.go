package rdb

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ServerInfo is what one server says of itself in INFO: the fields of
// its server, clients, memory, stats and keyspace sections, by name.
type ServerInfo struct {
	Addr   string
	Fields map[string]string
	// Err is why the server could not be read.
	Err error
}

// infoSections are the INFO sections ServerInfos reads, in one command.
var infoSections = []string{"server", "clients", "memory", "stats", "keyspace", "replication"}

// ServerInfos reads INFO from every node of a cluster, masters and
// replicas, or the one server: one command a server, sorted by address.
func (s *Store) ServerInfos(ctx context.Context) []ServerInfo {
	read := func(ctx context.Context, c redis.Cmdable, addr string) ServerInfo {
		text, err := c.Info(ctx, infoSections...).Result()
		if err != nil {
			return ServerInfo{Addr: addr, Err: err}
		}
		return ServerInfo{Addr: addr, Fields: parseInfo(text)}
	}
	cc, ok := s.c.(*redis.ClusterClient)
	if !ok {
		return nodes(ctx, s, read, func(err error) ServerInfo { return ServerInfo{Addr: "cluster", Err: err} })
	}
	var mu sync.Mutex
	var out []ServerInfo
	err := cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		got := read(ctx, c, c.Options().Addr)
		mu.Lock()
		out = append(out, got)
		mu.Unlock()
		return nil
	})
	if err != nil {
		out = append(out, ServerInfo{Addr: "cluster", Err: err})
	}
	slices.SortFunc(out, func(a, b ServerInfo) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// parseInfo reads INFO's "key:value" lines.
func parseInfo(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// ResultHead reads the length of the string key and, if it is at most
// limit bytes, its value: two commands in one round trip. found is
// false when key does not exist.
func (s *Store) ResultHead(ctx context.Context, key string, limit int64) (value []byte, size int64, found bool, err error) {
	var strlen *redis.IntCmd
	var get *redis.StringCmd
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		strlen = p.StrLen(ctx, key)
		// GETRANGE of the first limit+1 bytes: a value longer than limit
		// is not sent whole.
		get = p.GetRange(ctx, key, 0, limit)
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, 0, false, err
	}
	size = strlen.Val()
	if size == 0 {
		return nil, 0, false, nil
	}
	if size > limit {
		return nil, size, true, nil
	}
	return []byte(get.Val()), size, true, nil
}
