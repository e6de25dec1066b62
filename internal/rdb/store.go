package rdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/send"
)

// Store is the engine's Redis: a client, single node, Sentinel or
// Cluster, and the key names under one prefix.
type Store struct {
	c    redis.UniversalClient
	keys keyspace.Keys
}

// New returns a store on c with the keys of keys. The caller keeps
// ownership of c.
func New(c redis.UniversalClient, keys keyspace.Keys) *Store {
	return &Store{c: c, keys: keys}
}

// Client is the store's Redis client, for the engine's Client method
// and the Laravel bridge, which share it.
func (s *Store) Client() redis.UniversalClient { return s.c }

// Keys returns the key names.
func (s *Store) Keys() keyspace.Keys { return s.keys }

// Call is one script invocation.
type Call = send.Call

// Reply is the reply of one script call of Run.
type Reply = *redis.Cmd

// Run runs calls in one pipeline, by SHA with NOSCRIPT recovery
// (send.All). It returns one reply per call, and the first call's error
// if any; a nil reply (redis.Nil) is no error, except for a single call.
func (s *Store) Run(ctx context.Context, calls []Call) ([]Reply, error) {
	return send.All(ctx, s.c, calls)
}

// RunOne runs one call.
func (s *Store) RunOne(ctx context.Context, c Call) Reply {
	return c.Run(ctx, s.c)
}

// Time returns the time by the Redis server's clock, which every due
// time, lease and schedule tick follows.
func (s *Store) Time(ctx context.Context) (time.Time, error) {
	return s.c.Time(ctx).Result()
}

// IsNil reports whether err is the reply of a read that found nothing.
func IsNil(err error) bool { return errors.Is(err, redis.Nil) }

// HasErrorPrefix reports whether err is an error reply that starts with
// prefix (a script's own error, "DUPLICATE <id>").
func HasErrorPrefix(err error, prefix string) bool { return redis.HasErrorPrefix(err, prefix) }

// ErrorText is the text of an error reply after its prefix and a space.
func ErrorText(err error, prefix string) string {
	return strings.TrimPrefix(err.Error(), prefix+" ")
}

// Int reads an integer from a reply value.
func Int(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// eachNode calls fn for each master of a cluster, or for the one server
// of any other client, with its address.
func (s *Store) eachNode(ctx context.Context, fn func(ctx context.Context, c redis.Cmdable, addr string) error) error {
	cc, ok := s.c.(*redis.ClusterClient)
	if !ok {
		addr := ""
		if c, ok := s.c.(*redis.Client); ok {
			addr = c.Options().Addr
		}
		return fn(ctx, s.c, addr)
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return fn(ctx, m, m.Options().Addr)
	})
}

// IsCluster reports whether the store is on a Redis Cluster.
func (s *Store) IsCluster() bool {
	_, ok := s.c.(*redis.ClusterClient)
	return ok
}

// IsReply reports whether err is an error reply from Redis (a script's
// error, WRONGTYPE, OOM...): the command ran, or was refused, and its
// reply came. Any other error (a timeout, a broken connection, a
// cancelled context) may have lost the reply of a command Redis ran.
func IsReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}
