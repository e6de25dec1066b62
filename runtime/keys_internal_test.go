package runtime

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeysCache checks that cached queue keys are the keys built afresh,
// and that names past the cache's cap still get their own keys.
func TestKeysCache(t *testing.T) {
	k := newKeys("p")
	for i := range maxCachedQueues + 10 {
		name := fmt.Sprint("q", i)
		want := keys{prefix: "p"}.queue(name)
		require.Equal(t, want, k.queue(name))
		require.Equal(t, want, k.queue(name), "again, from the cache")
		require.Equal(t, "p:{"+name+"}:ready", k.queue(name).Ready)
	}
	require.Equal(t, int64(maxCachedQueues), k.cache.n.Load())
}
