package runtime_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedisStaysInTheDataLayer: of runtime's own files (tests aside),
// at most three import go-redis, for the client a caller hands in and
// the one Open makes; every command and script goes through
// internal/rdb, which imports nothing of runtime but its scripts
// (runtime/lua; docs/architecture.md).
func TestRedisStaysInTheDataLayer(t *testing.T) {
	// importers lists the files of glob that import path, or a package
	// under it if path ends in "/".
	importers := func(glob, path string) []string {
		files, err := filepath.Glob(glob)
		require.NoError(t, err)
		var out []string
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range parsed.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				if p == path || strings.HasSuffix(path, "/") && strings.HasPrefix(p, path) {
					out = append(out, filepath.Base(f))
					break
				}
			}
		}
		slices.Sort(out)
		return out
	}
	redis := importers("*.go", "github.com/redis/go-redis/")
	require.LessOrEqual(t, len(redis), 3, "runtime's files that import go-redis: %v", redis)
	require.Empty(t, importers("../internal/rdb/*.go", "github.com/jobgen/jobgen/runtime"), "internal/rdb imports runtime")
}
