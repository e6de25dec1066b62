package jobopt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPathsTableIsSound: the paths have names of their own, the pairs
// and the outcomes name real options and paths, and each outcome that
// is not Works says why (and a refusal, with what).
func TestPathsTableIsSound(t *testing.T) {
	t.Parallel()
	var paths []string
	for _, p := range Paths {
		require.NotContains(t, paths, p.Name)
		require.NotEmpty(t, p.Call, p.Name)
		paths = append(paths, p.Name)
	}
	for _, pair := range Pairs {
		require.Len(t, pair, 2)
		for _, name := range pair {
			require.True(t, isOption(name), "pair %v: %s is no option", pair, name)
		}
	}
	var names []string
	for _, o := range All {
		names = append(names, o.Name)
	}
	for _, o := range Overrides {
		names = append(names, o.Name)
	}
	for _, name := range names {
		for _, p := range paths {
			out := Expect(name, p)
			switch out.Effect {
			case Works:
				require.Empty(t, out.Why, "%s on %s", name, p)
			case Refused:
				require.NotEmpty(t, out.Err, "%s on %s", name, p)
				require.Len(t, out.Names, 2, "a refusal names what it refuses and where: %s on %s", name, p)
				fallthrough
			default:
				require.NotEmpty(t, out.Why, "%s on %s", name, p)
			}
		}
	}
	// The outcomes name no path or option that the tables do not.
	for p, byOption := range outcomes {
		require.Contains(t, paths, p)
		for name := range byOption {
			require.True(t, isOption(name), "outcomes[%q]: %s is no option", p, name)
		}
	}
	require.Equal(t, Refused, ExpectAll([]string{"Delay", "GroupLimit"}, "Debounced").Effect)
	require.Equal(t, NoWay, ExpectAll([]string{"Encrypted", "GroupLimit"}, "Listener").Effect)
	require.Equal(t, Refused, ExpectAll([]string{"UniqueFor", "GroupLimit"}, "Batch").Effect)
	require.Equal(t, NotApplied, ExpectAll([]string{"UniqueFor", "GroupLimit"}, "PushMany").Effect)
	require.Equal(t, Works, ExpectAll([]string{"Encrypted", "GroupLimit"}, "Dispatch").Effect)
}

func isOption(name string) bool {
	_, ok := optionByName(name)
	return ok
}

func optionByName(name string) (Option, bool) {
	for _, o := range All {
		if o.Name == name {
			return o, true
		}
	}
	for _, o := range Overrides {
		if o.Name == name {
			return Option{Name: o.Name}, true
		}
	}
	return Option{}, false
}
