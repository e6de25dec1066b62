package keyspace

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeysCache checks that cached queue keys are the keys built afresh,
// and that names past the cache's cap still get their own keys.
func TestKeysCache(t *testing.T) {
	k := New("p")
	for i := range maxCachedQueues + 10 {
		name := fmt.Sprint("q", i)
		want := Keys{prefix: "p"}.Queue(name)
		require.Equal(t, want, k.Queue(name))
		require.Equal(t, want, k.Queue(name), "again, from the cache")
		require.Equal(t, "p:{"+name+"}:ready", k.Queue(name).Ready)
	}
	require.Equal(t, int64(maxCachedQueues), k.cache.n.Load())
}

func TestCallsHashPerTick(t *testing.T) {
	k := Keys{prefix: "p"}
	t0 := time.UnixMilli(1_800_000_000_000)
	require.Equal(t, "p:calls:{q}:180000000000", k.Calls("q", CallsTick(t0)))
	require.Equal(t, k.Calls("q", CallsTick(t0)), k.Calls("q", CallsTick(t0.Add(9*time.Millisecond))), "one hash per 10 ms")
	require.NotEqual(t, k.Calls("q", CallsTick(t0)), k.Calls("q", CallsTick(t0.Add(10*time.Millisecond))))
}
