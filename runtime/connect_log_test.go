package runtime_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// openChildEnv makes the test binary a process that opens an engine on
// the URL it names, prints the error to stdout, and exits.
const openChildEnv = "JOBGEN_TEST_CHILD_OPEN"

func runChildOpen(url string) int {
	_, err := runtime.Open(context.Background(), url, runtime.EngineConfig{})
	fmt.Println(err)
	return 0
}

// runtime.Open on a Redis that is down says so in one line of jobgen's:
// go-redis's own pool log ("pool.go:770 ... failed to dial after 5
// attempts", four lines of it on stderr) goes to slog at Debug level. A
// process, because go-redis writes to the real stderr.
func TestOpenRedisDownSaysOneLine(t *testing.T) {
	t.Parallel()
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", closedPort(t))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), openChildEnv+"="+url)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run())
	require.Contains(t, stdout.String(), "connection refused")
	require.Contains(t, stdout.String(), "jobgen: cannot reach Redis at 127.0.0.1:")
	require.Empty(t, stderr.String(), "nothing from go-redis on stderr")
}
