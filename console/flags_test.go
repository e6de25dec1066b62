package console

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// validQueue refuses exactly the names runtime.ValidateQueueName refuses,
// with the same message less runtime.ErrInvalid's prefix, which the flag
// package's "invalid value" makes redundant.
func TestValidQueueFollowsRuntime(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"emails", "emails.high-1:x/y", "ü", strings.Repeat("q", 200),
		"", strings.Repeat("q", 201), "a{b", "a}b", "a#b", "emails#2",
	} {
		err := validQueue(name)
		rerr := runtime.ValidateQueueName(name)
		if rerr == nil {
			require.NoError(t, err, "%q", name)
			continue
		}
		require.ErrorIs(t, rerr, runtime.ErrInvalid, "%q", name)
		require.Error(t, err, "%q", name)
		require.False(t, errors.Is(err, runtime.ErrInvalid), "%q: %v", name, err)
		require.Equal(t, runtime.ErrInvalid.Error()+": "+err.Error(), rerr.Error(), "%q", name)
		require.True(t, strings.HasPrefix(err.Error(), "queue name "), "%q: %v", name, err)
	}
}
