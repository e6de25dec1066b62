package doccheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/doccheck"
)

// TestReadmeIsAFrontDoor holds README.md to what a newcomer reads in five
// minutes: at most MaxReadmeLines lines, a link to every guide in docs/,
// two set-up commands, and CI's test command among them.
func TestReadmeIsAFrontDoor(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(b)

	lines := strings.Count(strings.TrimRight(readme, "\n"), "\n") + 1
	require.LessOrEqual(t, lines, doccheck.MaxReadmeLines, "README.md has %d lines; move the detail to a guide in docs/", lines)

	linked := map[string]bool{}
	for _, l := range doccheck.Links(readme) {
		file, _, _ := strings.Cut(l.Target, "#")
		linked[strings.TrimPrefix(file, "./")] = true
	}
	for _, g := range guides(t, root) {
		require.True(t, linked[g], "README.md does not link the guide %s", g)
	}

	setup := section(readme, "## Set up")
	require.NotEmpty(t, setup, `README.md has no "## Set up" section`)
	require.Equal(t, 2, strings.Count(setup, "\n```sh\n"), "README.md's Set up has two commands: the quickstart and the tests")

	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	var cmds []string
	for _, l := range strings.Split(string(ci), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "set ") || strings.HasPrefix(l, "cd ") || strings.HasPrefix(l, "export ") {
			continue
		}
		cmds = append(cmds, l)
		require.Contains(t, setup, "\n"+l+"\n", "CI runs %q: README.md's Set up must give it verbatim", l)
	}
	require.NotEmpty(t, cmds, ".ci/run runs no command")
}

// section returns the text of the Markdown section that starts with the
// heading line h, up to the next heading of its level or higher outside
// code blocks.
func section(text, h string) string {
	level := len(h) - len(strings.TrimLeft(h, "#"))
	var out []string
	in, fenced := false, false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(l, "#") {
			n := len(l) - len(strings.TrimLeft(l, "#"))
			if in && n <= level {
				break
			}
			if l == h {
				in = true
			}
		}
		if in {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}
