package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Postgres is a PostgreSQL server of a test's own, started by
// scripts/postgres, so that the test may crash and restart it.
type Postgres struct {
	t      testing.TB
	script string
	dir    string
	url    string
}

// StartPostgres starts a PostgreSQL server for t, and stops it when the
// test ends. Without PostgreSQL installed the test is skipped, and fails
// in CI (JOBGEN_CI=1), where scripts/test installs it.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	script, err := findScript("scripts/postgres")
	if err != nil {
		t.Fatal(err)
	}
	initdb, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if _, err := exec.LookPath("initdb"); err != nil && len(initdb) == 0 {
		if os.Getenv("JOBGEN_CI") != "" {
			t.Fatal("PostgreSQL is not installed: run ./scripts/test, which installs it")
		}
		t.Skip("PostgreSQL is not installed (package postgresql)")
	}
	dir, err := os.MkdirTemp("", "jobgen-faults-pg")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(dir) // scripts/postgres creates it, for the postgres user
	p := &Postgres{t: t, script: script, dir: dir}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		t.Fatalf("scripts/postgres start: %v: %s", err, stderrOf(err))
	}
	p.url = strings.TrimSpace(string(out))
	return p
}

// URL returns the server's URL.
func (p *Postgres) URL() string { return p.url }

// Restart stops the server as a crash would, and starts it again on the
// same port.
func (p *Postgres) Restart() {
	p.t.Helper()
	if out, err := exec.Command(p.script, "restart", p.dir).CombinedOutput(); err != nil {
		p.t.Fatalf("scripts/postgres restart: %v: %s", err, out)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// findScript finds rel in the working directory or one of its parents.
func findScript(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("harness: no %s above the working directory", rel)
		}
		dir = parent
	}
}
