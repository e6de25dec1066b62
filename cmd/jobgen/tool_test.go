package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTool uses jobgen the way an application does, in a module of its
// own that requires this one (replaced by this checkout): go get -tool,
// make:job through go run, go generate with go tool, go build, and
// -check. It builds jobgen twice, so -short skips it.
func TestTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jobgen in a new module")
	}
	t.Parallel()
	root := repoRoot(t)
	app := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(app, "go.mod"), []byte(
		"module example.com/app\n\ngo 1.26\n\n"+
			"require github.com/jobgen/jobgen v0.0.0-00010101000000-000000000000\n\n"+
			"replace github.com/jobgen/jobgen => "+root+"\n"), 0o644))
	// This module's go.sum covers every dependency the app can reach.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(app, "go.sum"), sum, 0o644))

	env := append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = app
		cmd.Env = env
		if args[0] == "get" {
			// This checkout is on no proxy; with lookups off, go get takes
			// the module from its replacement, as it would take a
			// published one from the proxy.
			cmd.Env = append(cmd.Env, "GOPROXY=off")
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}

	run("get", "-tool", "github.com/jobgen/jobgen/cmd/jobgen")
	out := run("run", "github.com/jobgen/jobgen/cmd/jobgen", "make:job", "SendEmail", "--queue", "emails", "--dir", "jobs")
	require.Contains(t, out, "created "+filepath.Join("jobs", "send_email.go"))
	run("tool", "jobgen", "make:job", "Resize", "--dir", "jobs")
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.go"), []byte(`package main

import (
	"context"

	"example.com/app/jobs"
	"github.com/jobgen/jobgen/runtime"
)

func main() {
	r := runtime.NewRouter()
	jobs.Register(r, nil)
	_, _ = jobs.SendEmail{ID: "1"}.WithChain(jobs.Resize{}).Delay(0).Dispatch(context.Background())
}
`), 0o644))

	run("generate", "./...")
	gen, err := os.ReadFile(filepath.Join(app, "jobs", "jobs_gen.go"))
	require.NoError(t, err)
	require.Contains(t, string(gen), `runtime.Register[SendEmail](r, "jobs.SendEmail", runtime.HandleMethod[SendEmail])`)
	run("build", "./...")
	run("vet", "./...")
	run("tool", "jobgen", "-check", "./...")
}
