package lua

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every .lua file here is a script, with each helper it names joined
// in, and nothing else changed.
func TestScriptsAreTheFilesWithTheirHelpers(t *testing.T) {
	files, err := filepath.Glob("*.lua")
	require.NoError(t, err)
	require.Len(t, All(), len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		s := Get(strings.TrimSuffix(filepath.Base(f), ".lua"))
		require.NotContains(t, s.Src, "-- uses:", s.Name)
		require.Equal(t, SHA1(s.Src), s.SHA)
		want := string(raw)
		for _, m := range usesLine.FindAllStringSubmatch(want, -1) {
			var helpers strings.Builder
			for _, n := range strings.Split(m[1], ",") {
				lib, err := os.ReadFile(filepath.Join("lib", strings.TrimSpace(n)+".lua"))
				require.NoError(t, err, "%s uses %s", s.Name, n)
				helpers.Write(lib)
			}
			want = strings.Replace(want, m[0], helpers.String(), 1)
		}
		require.Equal(t, want, s.Src, s.Name)
	}
}

// A helper is written once: no script defines a function of lib/ again.
func TestHelpersAreNotCopied(t *testing.T) {
	libs, err := filepath.Glob("lib/*.lua")
	require.NoError(t, err)
	require.NotEmpty(t, libs)
	files, err := filepath.Glob("*.lua")
	require.NoError(t, err)
	for _, l := range libs {
		src, err := os.ReadFile(l)
		require.NoError(t, err)
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, "local function ") {
				continue
			}
			for _, f := range files {
				raw, err := os.ReadFile(f)
				require.NoError(t, err)
				require.NotContains(t, string(raw), line, "%s defines what %s has", f, l)
			}
		}
	}
}

func TestJoinRefusesAnUnknownHelper(t *testing.T) {
	_, err := join("-- uses: nothing_such\nreturn 1\n")
	require.ErrorContains(t, err, `uses "nothing_such"`)
}

// A new job enters a queue through lib/enqueue.lua alone: no script
// writes to a ready list or a delayed set it names in its header but
// those that move a job already in its queue (a release sends a reserved
// job back, an unreserve gives held jobs back); lib/migrate_due.lua moves
// due jobs to ready. The Laravel bridge's scripts write Laravel's own
// layout.
func TestOneEnqueueStep(t *testing.T) {
	moves := map[string]bool{"release": true, "unreserve": true}
	role := regexp.MustCompile(`(?m)^-- KEYS\[(\d+)\] -> (ready list|delayed zset)`)
	files, err := filepath.Glob("*.lua")
	require.NoError(t, err)
	var writers []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".lua")
		if strings.HasPrefix(name, "laravel_") {
			continue
		}
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range role.FindAllStringSubmatch(string(raw), -1) {
			write := regexp.MustCompile(`'(RPUSH|LPUSH|ZADD)', KEYS\[` + m[1] + `\]`)
			if write.Match(raw) {
				writers = append(writers, name)
				require.True(t, moves[name], "%s writes to its %s (KEYS[%s]): a new job goes through lib/enqueue.lua", name, m[2], m[1])
			}
		}
	}
	require.ElementsMatch(t, []string{"release", "release", "unreserve"}, writers, "the scripts that move a job back")
	enqueue, err := os.ReadFile("lib/enqueue.lua")
	require.NoError(t, err)
	require.Regexp(t, `'RPUSH', KEYS\[b\]`, string(enqueue))
	require.Regexp(t, `'ZADD', KEYS\[b \+ 1\]`, string(enqueue))
}
