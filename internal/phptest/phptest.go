// Package phptest gives tests a PHP interpreter and Laravel's queue
// component, as Debian installs them (php-cli, php-redis,
// php-laravel-framework), so that the Laravel bridge is tested against
// the real thing.
//
// scripts/test installs the packages when they are missing and sets
// RequireEnv, under which a test that needs PHP fails when it is absent;
// elsewhere such a test is skipped, saying what to install.
package phptest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
)

// RequireEnv, set to 1, makes a missing PHP or Laravel a test failure
// rather than a skip.
const RequireEnv = "JOBGEN_TEST_PHP"

// Autoload is where Debian's php-laravel-framework puts the framework's
// autoloader (dpkg -L php-laravel-framework).
const Autoload = "/usr/share/php/Illuminate/autoload.php"

// Bin returns the path of php, skipping or failing t if it is missing.
func Bin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("php")
	if err != nil {
		missing(t, "php is not installed")
	}
	return bin
}

// Laravel returns the path of php, and checks that Laravel's autoloader
// and the redis extension are there, skipping or failing t if not.
func Laravel(t testing.TB) string {
	t.Helper()
	bin := Bin(t)
	if _, err := os.Stat(Autoload); err != nil {
		missing(t, "Laravel is not installed at "+Autoload)
	}
	out, err := exec.Command(bin, "-r", `echo extension_loaded("redis") ? "yes" : "no";`).Output()
	if err != nil || !bytes.Equal(out, []byte("yes")) {
		missing(t, "PHP's redis extension is not loaded")
	}
	return bin
}

func missing(t testing.TB, why string) {
	t.Helper()
	msg := why + ": run scripts/test, which installs php-cli php-redis php-laravel-framework from Debian's packages"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Run runs script with php, stdin as its input, and returns its
// standard output; a non-zero exit fails t with its standard error.
func Run(t testing.TB, ctx context.Context, bin, script string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php %s: %v\n%s", script, err, stderr.String())
	}
	return out
}
