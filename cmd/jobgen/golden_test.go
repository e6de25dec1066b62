package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/generate"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

var update = flag.Bool("update", false, "rewrite the wanted output of the golden cases in testdata")

// TestGolden generates each case in testdata/<case>/ and compares the
// result with the case's committed jobs_gen.go; -update rewrites them.
// The cases are then compiled and vetted, generated files included.
func TestGolden(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	require.NoError(t, err)
	var pkgs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join("testdata", e.Name())
		pkgs = append(pkgs, "./"+filepath.ToSlash(dir))
		t.Run(e.Name(), func(t *testing.T) { checkGolden(t, dir) })
	}
	require.NotEmpty(t, pkgs)
	buildGolden(t, pkgs...)
}

// checkGolden generates the case in dir and compares the result with
// its committed files; -update rewrites them.
func checkGolden(t *testing.T, dir string) {
	t.Helper()
	res, err := generate.Run(load.Config{Dir: dir})
	require.NoError(t, err)
	// The generated file, and the schema lock (schema_lock_test.go
	// has the lock's own cases).
	require.Len(t, res.Files, 2)
	for _, f := range res.Files {
		require.Contains(t, []string{model.OutputFile, model.LockFile}, filepath.Base(f.Path))
		if *update {
			require.NoError(t, os.WriteFile(f.Path, f.Src, 0o644))
		}
		want, err := os.ReadFile(f.Path)
		require.NoError(t, err, "no golden file: run go test ./cmd/jobgen -run TestGolden -update")
		require.Equal(t, string(want), string(f.Src), "%s is out of date: run go test ./cmd/jobgen -run TestGolden -update", f.Path)
	}
}

// buildGolden compiles and vets the golden cases pkgs, generated files
// included.
func buildGolden(t *testing.T, pkgs ...string) {
	t.Helper()
	for _, args := range [][]string{{"build"}, {"vet"}} {
		cmd := exec.Command("go", append(args, pkgs...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s of the golden cases:\n%s", args[0], out)
	}
}
