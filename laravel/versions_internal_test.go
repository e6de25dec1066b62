package laravel

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// On a cluster, Laravel 13 wraps a queue's name in braces unless it has
// a hash tag of its own, which apps on 12 and before give their queues
// ("{default}"); the bridge does the same, not "{{default}}".
func TestKeysForHashTagOfItsOwn(t *testing.T) {
	require.Equal(t, "p_queues:{emails}", keysFor("p_", "emails", true).Ready)
	require.Equal(t, "p_queues:{emails}:delayed", keysFor("p_", "{emails}", true).Delayed)
	require.Equal(t, "p_queues:app{x}:reserved", keysFor("p_", "app{x}", true).Reserved)
	require.Equal(t, "p_queues:{{}}", keysFor("p_", "{}", true).Ready, "an empty tag is none")
	require.Equal(t, "p_queues:emails", keysFor("p_", "emails", false).Ready)
}

// Laravel 12 and 13 name the lock of a class with displayName() by its
// xxh128, which the bridge refuses by name rather than miss.
func TestUniqueKeyOfDisplayName(t *testing.T) {
	_, err := uniqueKey(12, `App\Jobs\X`, "Nightly report", "5")
	require.ErrorIs(t, err, ErrUnmappable)
	require.ErrorContains(t, err, `App\Jobs\X defines displayName() ("Nightly report")`)
	k, err := uniqueKey(10, `App\Jobs\X`, "Nightly report", "5")
	require.NoError(t, err)
	require.Equal(t, `laravel_unique_job:App\Jobs\X5`, k, "before 12, the class names it")
}
