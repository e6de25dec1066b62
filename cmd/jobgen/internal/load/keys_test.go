package load

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
)

// TestKeysAreDocumented: the keys the loader reads are exactly those of
// jobopt.Keys, from which the docs' tables and make:job's list are
// made, so that no key goes undocumented or is documented but refused;
// and each key's example reads.
func TestKeysAreDocumented(t *testing.T) {
	var documented []string
	for _, k := range jobopt.Keys {
		documented = append(documented, k.Key)
	}
	slices.Sort(documented)
	require.Equal(t, documented, keys, "the loader's keys (setters) and jobopt.Keys differ: add the key to jobopt.Keys, with an example and its usage")
	for _, k := range jobopt.Keys {
		var a annotation
		require.Empty(t, a.parseLine(k.Example), "the example of %s is refused", k.Key)
	}
}
