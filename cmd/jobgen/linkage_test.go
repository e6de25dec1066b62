package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryLinksNoEmbeddedServer: the jobgen binary links no in-process
// Redis server (miniredis, gopher-lua); only runtime/embedded brings it
// in, and jobgen does not import it.
func TestBinaryLinksNoEmbeddedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jobgen")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "jobgen")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	out, err = exec.Command("go", "version", "-m", bin).CombinedOutput()
	require.NoError(t, err, "go version -m:\n%s", out)
	require.Contains(t, string(out), "github.com/redis/go-redis/v9", "the listing names the modules linked")
	require.NotContains(t, string(out), "miniredis")
	require.NotContains(t, string(out), "gopher-lua")
}
