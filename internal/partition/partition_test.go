package partition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The slots Redis's CLUSTER KEYSLOT gives.
func TestKeySlot(t *testing.T) {
	for tag, slot := range map[string]uint16{"": 0, "foo": 12182, "bar": 5061, "123456789": 12739, "emails": 3728} {
		require.Equal(t, slot, KeySlot(tag), tag)
	}
}

func TestNamesSpreadOverTheRing(t *testing.T) {
	for _, q := range []string{"emails", "default", "q"} {
		for n := 1; n <= 8; n++ {
			names := Names(q, n)
			require.Len(t, names, n)
			require.Equal(t, q, names[0])
			require.Equal(t, names, Names(q, n), "the same on every call")
			first := int(KeySlot(q)) * n / SlotCount
			arcs := map[int]bool{first: true}
			for i, name := range names[1:] {
				require.True(t, strings.HasPrefix(name, q+Sep), name)
				require.NoError(t, ValidateName(name), name)
				arc := int(KeySlot(name)) * n / SlotCount
				require.Equal(t, (first+i+1)%n, arc, "partition %d of %d of %q", i+1, n, q)
				arcs[arc] = true
			}
			require.Len(t, arcs, n, "one arc each")
		}
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"emails", "emails#1", "emails#12.345"} {
		require.NoError(t, ValidateName(ok), ok)
	}
	for _, bad := range []string{"", "emails#", "emails#x", "emails#1.", "emails#.1", "a{b}#1", "emails#1#2", "#1"} {
		require.Error(t, ValidateName(bad), bad)
	}
	require.ErrorContains(t, ValidateName("emails#x"), `contains "#"`)
}
