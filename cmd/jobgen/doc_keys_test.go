package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
)

// The lines of doc.go that hold the list of keys: it follows keysIntro
// and ends at the next empty comment line.
const (
	keysIntro   = "// fill runtime.JobOptions:\n//\n"
	keysColumn  = 26 // where the usage starts, after the example
	keysWrapped = 52 // the widest usage line
)

// TestDocListsKeys: the list of keys in doc.go (go doc cmd/jobgen) is
// the job keys of jobopt.Keys, with their usage, so that it says what
// docs/jobs.md says. -update writes it.
func TestDocListsKeys(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	doc := string(b)
	i := strings.Index(doc, keysIntro)
	require.True(t, i >= 0, "doc.go has no %q before its list of keys", keysIntro)
	i += len(keysIntro)
	j := i + strings.Index(doc[i:], "//\n")
	want := docKeys(t)
	if *update {
		require.NoError(t, os.WriteFile("doc.go", []byte(doc[:i]+want+doc[j:]), 0o644))
		return
	}
	require.Equal(t, want, doc[i:j], "doc.go's list of keys is stale: run go test ./cmd/jobgen -run TestDocListsKeys -update")
}

// docKeys renders the job keys of jobopt.Keys as doc.go lists them.
func docKeys(t *testing.T) string {
	var s strings.Builder
	for _, k := range jobopt.Keys {
		if !k.Job {
			continue
		}
		require.Less(t, len(k.Example), keysColumn, "the example of %s is too long for doc.go's column", k.Key)
		var lines []string
		line := ""
		for _, w := range strings.Fields(k.PlainText()) {
			if line != "" && len(line)+1+len(w) > keysWrapped {
				lines = append(lines, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		lines = append(lines, line)
		for n, l := range lines {
			lead := ""
			if n == 0 {
				lead = k.Example
			}
			fmt.Fprintf(&s, "//\t%-*s%s\n", keysColumn, lead, l)
		}
	}
	return s.String()
}
