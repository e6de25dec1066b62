package urlscheme_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// This test binary does not import runtime/embedded: embedded:// is an
// error that names the import to add, never a silent fallback.
func TestEmbeddedNeedsItsImport(t *testing.T) {
	_, err := runtime.Open(context.Background(), "embedded://", runtime.EngineConfig{})
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorContains(t, err, `import _ "github.com/jobgen/jobgen/runtime/embedded"`)
}
