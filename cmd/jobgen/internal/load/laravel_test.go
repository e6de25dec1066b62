package load

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadLaravelEncrypted: an encrypted job of a queued PHP class
// loads; an encrypted string job, which has no command to seal, is an
// error at the type.
func TestLoadLaravelEncrypted(t *testing.T) {
	t.Parallel()
	p, err := loadSource(t, "package mail\n\n//job:laravel=App\\Jobs\\ChargeCard encrypted\ntype T struct{ A int }\n")
	require.NoError(t, err)
	require.Len(t, p.Jobs, 1)
	require.True(t, p.Jobs[0].Options.Encrypted)

	_, err = loadSource(t, "package mail\n\n//job:laravel=App\\Jobs\\Import@handle encrypted\ntype T struct{ A int }\n")
	require.Equal(t, []string{`jobs.go:4:6: T: laravel=App\Jobs\Import@handle is a string job, whose data Laravel sends as plain JSON, and encrypted seals a queued class's command (ShouldBeEncrypted); drop encrypted, or map the job to a queued class`}, problems(t, err))
}
