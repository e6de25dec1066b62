package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/generate"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// TestCommittedOutputIsFresh regenerates, in memory, every package of the
// repository that has //job: annotations or jobgen output, examples
// included and testdata excluded, and fails if a file on disk differs.
func TestCommittedOutputIsFresh(t *testing.T) {
	root := repoRoot(t)
	// Directories to regenerate, by the module they belong to.
	byModule := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		ok, err := hasJobs(path)
		if err != nil || !ok {
			return err
		}
		dir := filepath.Dir(path)
		mod := moduleOf(t, root, dir)
		if !slices.Contains(byModule[mod], dir) {
			byModule[mod] = append(byModule[mod], dir)
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, byModule, root, "found no //job: package in the repository")

	for mod, dirs := range byModule {
		var patterns []string
		for _, d := range dirs {
			rel, err := filepath.Rel(mod, d)
			require.NoError(t, err)
			patterns = append(patterns, "./"+filepath.ToSlash(rel))
		}
		res, err := generate.Run(load.Config{Dir: mod, Patterns: patterns})
		require.NoError(t, err, "regenerate %v in module %s", patterns, mod)
		stale, err := res.Stale()
		require.NoError(t, err)
		require.Empty(t, stale, "generated files are stale: run go generate ./... in %s", mod)
	}
}

// hasJobs reports whether the Go file at path has an annotation line or
// is jobgen's output.
func hasJobs(path string) (bool, error) {
	if filepath.Base(path) == model.OutputFile {
		return load.IsOutput(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "//job:") || line == "// job:" {
			return true, nil
		}
	}
	return false, sc.Err()
}

// repoRoot returns the directory of the module github.com/jobgen/jobgen,
// found upwards from this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/jobgen/jobgen\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "module github.com/jobgen/jobgen not found above the test")
		dir = parent
	}
}

// moduleOf returns the root of the module holding dir: the nearest
// directory at or above it, up to root, with a go.mod.
func moduleOf(t *testing.T, root, dir string) string {
	t.Helper()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil || d == root {
			return d
		}
	}
}
