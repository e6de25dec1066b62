package lock_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/cli"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

var update = flag.Bool("update", false, "rewrite the wanted output of the schema lock cases in testdata")

// TestSchemaLock runs each case in testdata/<case>/: jobgen generates
// before.go, which writes the lock, then runs again on after.go, with
// the flags in args if there is one. What it printed and its exit code,
// and the lock it left, are compared with the case's want file; -update
// rewrites them. A refused change leaves the lock as it was: the want
// file shows the generator's messages verbatim.
func TestSchemaLock(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel()
			src := filepath.Join("testdata", e.Name())
			dir := newModule(t)
			copyFile(t, filepath.Join(src, "before.go"), filepath.Join(dir, "jobs.go"))
			code, out := run(t, dir)
			require.Equal(t, 0, code, "before.go: %s", out)
			before, err := os.ReadFile(filepath.Join(dir, model.LockFile))
			require.NoError(t, err)

			copyFile(t, filepath.Join(src, "after.go"), filepath.Join(dir, "jobs.go"))
			var args []string
			if b, err := os.ReadFile(filepath.Join(src, "args")); err == nil {
				args = strings.Fields(string(b))
			}
			code, out = run(t, dir, args...)
			after, err := os.ReadFile(filepath.Join(dir, model.LockFile))
			require.NoError(t, err)
			if code != 0 {
				require.Equal(t, string(before), string(after), "a refused change leaves the lock as it was")
			}
			got := fmt.Sprintf("exit %d\n%s", code, out)
			if code == 0 {
				got += "--- " + model.LockFile + "\n" + string(after)
			}
			want := filepath.Join(src, "want")
			if *update {
				require.NoError(t, os.WriteFile(want, []byte(got), 0o644))
			}
			b, err := os.ReadFile(want)
			require.NoError(t, err, "no want file: run go test ./cmd/jobgen/internal/lock -run TestSchemaLock -update")
			require.Equal(t, string(b), got)
		})
	}
}

// newModule returns a directory holding a module of its own, for a
// case's package.
func newModule(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/mail\n\ngo 1.22\n"), 0o644))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

// run runs jobgen in dir as go generate would, and returns its exit
// code and what it printed.
func run(t *testing.T, dir string, args ...string) (int, string) {
	var out bytes.Buffer
	c := &cli.Command{Dir: dir, Stdout: &out, Stderr: &out}
	code := c.Run(args)
	return code, out.String()
}
