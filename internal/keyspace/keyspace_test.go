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

func TestCallsHashPerSpan(t *testing.T) {
	k := Keys{prefix: "p"}
	t0 := time.UnixMilli(1_800_000_000_000)
	span := CallsSpan(time.Minute)
	require.Equal(t, 5*time.Second, span)
	require.Equal(t, time.Second, CallsSpan(time.Second), "at least a second")
	require.Equal(t, "p:calls:{q}:360000000", k.Calls("q", CallsTick(t0, span)))
	require.Equal(t, k.Calls("q", CallsTick(t0, span)), k.Calls("q", CallsTick(t0.Add(4999*time.Millisecond), span)), "one hash per 5 s")
	require.NotEqual(t, k.Calls("q", CallsTick(t0, span)), k.Calls("q", CallsTick(t0.Add(5*time.Second), span)))
}
