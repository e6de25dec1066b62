package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// laravel:doctor runs from a Laravel app's directory, which has no
// go.mod, as `go run github.com/jobgen/jobgen/cmd/jobgen@VERSION
// laravel:doctor`: the module, served at a version by a file proxy made
// from this tree, builds and runs outside any module. (A replace or
// exclude directive in the root go.mod would make go run refuse it.)
func TestDoctorRunsOutsideAModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jobgen from a module proxy: slow")
	}
	t.Parallel()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	require.NoError(t, err)
	modCache := strings.TrimSpace(run(t, exec.Command(goBin, "env", "GOMODCACHE")))

	// A version of its own, so that the module cache, shared for the
	// dependencies (and their builds), never holds another tree under it.
	const path = "github.com/jobgen/jobgen"
	var tag [6]byte
	_, _ = rand.Read(tag[:])
	version := "v0.0.0-doctor.t" + hex.EncodeToString(tag[:])
	t.Cleanup(func() {
		_ = os.RemoveAll(filepath.Join(modCache, path+"@"+version))
		matches, _ := filepath.Glob(filepath.Join(modCache, "cache", "download", path, "@v", version+".*"))
		matches = append(matches, filepath.Join(modCache, "cache", "download", path, "@v", "list"))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	})
	proxy := t.TempDir()
	dir := filepath.Join(proxy, path, "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	require.NoError(t, err)
	require.NoError(t, modzip.CreateFromDir(zf, module.Version{Path: path, Version: version}, root))
	require.NoError(t, zf.Close())
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".info"), []byte(fmt.Sprintf(`{"Version":%q}`, version)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644))

	// The app: a .env and config/queue.php, no go.mod anywhere above it.
	app := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(app, ".env"), []byte("APP_NAME=Shop\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PORT=1\n"), 0o600))
	cmd := exec.Command(goBin, "run", path+"/cmd/jobgen@"+version, "laravel:doctor")
	cmd.Dir = app
	cmd.Env = append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modCache, "cache", "download")),
		"GOFLAGS=-modcacherw -buildvcs=false", "GOSUMDB=off", "GOWORK=off", "GO111MODULE=on")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, 1, exit.ExitCode(), "%s", out)
	require.Contains(t, string(out), `OK   QUEUE_CONNECTION "redis" is a Redis connection`)
	require.Contains(t, string(out), "FAIL Redis at 127.0.0.1:1 (database 0, from REDIS_HOST, REDIS_PORT, REDIS_DB) does not answer")
}

func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}
