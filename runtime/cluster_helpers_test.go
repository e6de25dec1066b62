package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// keysMatching returns the keys that match pattern: on every master of a
// cluster, where KEYS sees only the node it is sent to, or on the one
// server.
func keysMatching(t *testing.T, b bundle, pattern string) []string {
	t.Helper()
	cc, ok := b.rdb.(*redis.ClusterClient)
	if !ok {
		keys, err := b.rdb.Keys(b.ctx, pattern).Result()
		require.NoError(t, err)
		return keys
	}
	var mu sync.Mutex
	var keys []string
	err := cc.ForEachMaster(b.ctx, func(ctx context.Context, node *redis.Client) error {
		ks, err := node.Keys(ctx, pattern).Result()
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return err
	})
	require.NoError(t, err)
	return keys
}

// jobKeys returns the keys of queue, after checking that each hash that
// records its push and reserve calls (EngineConfig.RetryWindow), which
// are named apart from them, expires within window and the span of time
// a hash covers (a twelfth of it, at least 1 s).
func jobKeys(t *testing.T, b bundle, queue string, window time.Duration) []string {
	t.Helper()
	window += max(window/12, time.Second)
	for _, k := range keysMatching(t, b, b.prefix+":calls:{"+queue+"}:*") {
		ttl, err := b.rdb.PTTL(b.ctx, k).Result()
		require.NoError(t, err)
		require.True(t, ttl > 0 && ttl <= window, "record %s expires in %v, want within %v", k, ttl, window)
	}
	keys := keysMatching(t, b, b.prefix+":{"+queue+"}:*")
	for _, k := range keys {
		require.NotContains(t, k, ":calls:", "a record of calls among the queue's keys")
	}
	return keys
}
