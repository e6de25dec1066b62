package doccheck_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/doccheck"
)

func TestSlug(t *testing.T) {
	cases := map[string]string{
		"The worker":                      "the-worker",
		"Chains and batches":              "chains-and-batches",
		"`queue:work`'s flags":            "queueworks-flags",
		"Cluster, Sentinel & failover":    "cluster-sentinel--failover",
		"API (v2.0) by who calls it":      "api-v20-by-who-calls-it",
		"[Laravel](docs/laravel.md) jobs": "laravel-jobs",
		"**Once** per tick":               "once-per-tick",
		"Déjà vu":                         "déjà-vu",
		"snake_case and kebab-case":       "snake_case-and-kebab-case",
		"  Trailing  spaces  ":            "trailing--spaces",
		"<code>Inspector</code>.Failed()": "inspectorfailed",
	}
	for in, want := range cases {
		require.Equal(t, want, doccheck.Slug(in), "Slug(%q)", in)
	}
}

func TestAnchorsNumberRepeatsAndSkipCode(t *testing.T) {
	text := "# Title\n## Usage\n```sh\n# not a heading\n```\n## Usage\n### Usage ###\n<a name=\"custom\"></a>\n"
	got := doccheck.Anchors(text)
	require.Equal(t, map[string]bool{"title": true, "usage": true, "usage-1": true, "usage-2": true, "custom": true}, got)
}

func TestLinks(t *testing.T) {
	text := strings.Join([]string{
		"See [the guide](docs/guide.md) and ![a picture](docs/a.png \"title\").",
		"`[not a link](code.md)` but [one](<docs/with space.md>) and [two](#here)",
		"```go",
		"x := [a](b.md)",
		"```",
		"[label]: docs/ref.md#part",
		"[out](https://example.com/x.md) [nested [brackets]](n.md)",
		"[`runtime`](runtime/doc.go) and `` a `span` `` [after](a.md)",
	}, "\n")
	var got []string
	for _, l := range doccheck.Links(text) {
		got = append(got, l.Target)
		require.NotZero(t, l.Line)
	}
	require.Equal(t, []string{"docs/guide.md", "docs/a.png", "docs/with space.md", "#here", "docs/ref.md#part", "https://example.com/x.md", "n.md", "runtime/doc.go", "a.md"}, got)
}

// TestCheckFindsDeadLinks runs Check on a small repository with one link
// of each kind that works and one of each kind that does not.
func TestCheckFindsDeadLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("docs/guide.md", "# Guide\n## Getting started\n[back](../README.md#top-heading) [up](../README.md#gone)\n")
	write("pkg/doc.go", "package pkg\n")
	write("README.md", strings.Join([]string{
		"# Top heading",
		"[guide](docs/guide.md) [section](docs/guide.md#getting-started) [pkg](pkg) [code](pkg/doc.go)",
		"[self](#top-heading) [web](https://example.com/nothing.md#nowhere) [escaped](docs/guide.md#getting%2Dstarted)",
		"[missing file](docs/missing.md)",
		"[missing anchor](docs/guide.md#installing)",
		"[missing self](#nothing)",
		"[outside](../elsewhere.md)",
		"[empty]()",
	}, "\n"))

	errs, err := doccheck.Check(root, filepath.Join(root, "README.md"))
	require.NoError(t, err)
	require.Equal(t, []string{
		`README.md:4: link "docs/missing.md": no such file or directory docs/missing.md`,
		`README.md:5: link "docs/guide.md#installing": no heading with anchor #installing in docs/guide.md`,
		`README.md:6: link "#nothing": no heading with anchor #nothing in README.md`,
		`README.md:7: link "../elsewhere.md": points outside the repository`,
		`README.md:8: link "": empty target`,
	}, messages(errs))

	errs, err = doccheck.Check(root, filepath.Join(root, "docs/guide.md"))
	require.NoError(t, err)
	require.Equal(t, []string{
		`docs/guide.md:3: link "../README.md#gone": no heading with anchor #gone in README.md`,
	}, messages(errs))
}

func messages(errs []error) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// repoRoot is the repository's top directory, two levels up from this
// package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.work"))
	require.NoError(t, err, "the repository's root holds go.work")
	return root
}

// guides lists docs/*.md, relative to root.
func guides(t *testing.T, root string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var out []string
	for _, p := range paths {
		out = append(out, filepath.ToSlash(must(filepath.Rel(root, p))))
	}
	return out
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// TestNoDeadLinks fails on any relative link of README.md, CHANGELOG.md
// or docs/*.md to a file that does not exist, or to a heading a Markdown
// file does not have.
func TestNoDeadLinks(t *testing.T) {
	root := repoRoot(t)
	files := append([]string{"README.md", "CHANGELOG.md"}, guides(t, root)...)
	for _, f := range files {
		errs, err := doccheck.Check(root, filepath.Join(root, f))
		require.NoError(t, err)
		if len(errs) > 0 {
			t.Errorf("dead links:\n%v", errors.Join(errs...))
		}
	}
}
