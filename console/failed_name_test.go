package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A cancelled job is listed by its name, as the dashboard shows it, not
// as "(undecodable)": its failure record names none, its payload does.
func TestFailedListsACancelledJobByName(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ids := b.push(t, "mail", greet{})
		_, err := runtime.NewInspector(b.engine).Cancel(b.ctx, "mail", ids[0], 0)
		require.NoError(t, err)
		out := b.ok(t, "queue:failed")
		require.Contains(t, out, "test.Greet")
		require.NotContains(t, out, "(undecodable)")
		f, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, "mail", ids[0])
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "test.Greet", f.Name)
		require.True(t, f.Cancelled)
	})
}
