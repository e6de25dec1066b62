package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// queueBundle is a real Redis with a prefix of its own and a failed job.
type queueBundle struct {
	url, prefix string
	engine      *runtime.Engine
	failedID    string
}

func setupQueue(t *testing.T) queueBundle {
	t.Helper()
	ctx := context.Background()
	b := queueBundle{url: redistest.Backends(t)[0].URL, prefix: redistest.Prefix(t)}
	e, err := runtime.Open(ctx, b.url, runtime.EngineConfig{Prefix: b.prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	b.engine = e
	require.NoError(t, e.Push(ctx, &runtime.Envelope{Name: "mail.SendEmail", Queue: "emails", Body: []byte{0x80}}))
	batch, err := runtime.NewBroker(e).Reserve(ctx, "emails", 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, batch.Jobs, 1)
	b.failedID = batch.Jobs[0].ID
	require.NoError(t, runtime.NewBroker(e).Fail(ctx, runtime.Failure{Ref: batch.Jobs[0].Ref, Name: "mail.SendEmail", Err: errors.New("smtp: 550 no such user"), Attempts: 1}))
	return b
}

// The queue commands run in-process, through package console.
func TestQueueCommands(t *testing.T) {
	t.Parallel()
	q := setupQueue(t)
	b := setup(t, nil)
	env := map[string]string{"REDIS_URL": q.url}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		c := &Command{Dir: b.dir, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
		code := c.Run(args)
		return code, stdout.String(), stderr.String()
	}

	code, stdout, stderr := run("queue:failed", "--prefix", q.prefix)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, q.failedID+"  emails  mail.SendEmail  1")
	require.Contains(t, stdout, "smtp: 550 no such user")

	code, stdout, _ = run("queue:size", "--prefix", q.prefix)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "emails")

	code, _, stderr = run("queue:work", "--prefix", q.prefix)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "jobgen queue:work: needs the application's job handlers")
	require.Equal(t, 1, strings.Count(stderr, "\n"))

	code, stdout, _ = run("queue:work", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "Usage: jobgen queue:work [flags]")
	code, stdout, _ = run("help", "queue:retry")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "Usage: jobgen queue:retry [ID... | all] [flags]")

	code, stdout, _ = run("help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "jobgen make:job Name")
	// the column is as wide as the longest command's name
	require.Regexp(t, `queue:prune-failed +Delete failed jobs older than --hours`, stdout)
	require.Regexp(t, `queue:workflow +Show a workflow`, stdout)
}

// TestBinary runs the built jobgen binary's queue commands on a real
// Redis, reading the URL from REDIS_URL.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jobgen")
	}
	t.Parallel()
	q := setupQueue(t)
	bin := filepath.Join(t.TempDir(), "jobgen")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/jobgen/jobgen/cmd/jobgen").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)

	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "REDIS_URL="+q.url, "JOBGEN_REDIS_URL=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, stdout.String(), stderr.String()
	}

	code, stdout, stderr := run("queue:failed", "--prefix", q.prefix)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, q.failedID)

	code, stdout, stderr = run("queue:retry", "all", "--prefix", q.prefix)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "Retried 1 failed job (emails 1).\n", stdout)

	code, stdout, _ = run("queue:monitor", "--prefix", q.prefix, "--max", "0")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, "emails  1     0       ALERT")

	code, _, stderr = run("queue:work", "--prefix", q.prefix)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "console.Main(router)")

	code, _, stderr = run("queue:size", "--redis", "")
	require.Equal(t, 0, code, stderr) // an empty --redis falls back to REDIS_URL
}
