package console_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// slow is the job of testdata/app.
type slow struct {
	Name string
	For  time.Duration
}

func (slow) JobName() string                { return "test.Slow" }
func (slow) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j slow) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// secret is the encrypted job of testdata/app.
type secret struct{ Text string }

func (secret) JobName() string                { return "test.Secret" }
func (secret) JobOptions() runtime.JobOptions { return runtime.JobOptions{Encrypted: true} }
func (j secret) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// testKeys is the key ring of testdata/app, in APP_KEYS.
const testKeys = "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// buildApp builds testdata/app, a worker binary built the way an
// application builds one, and returns its path.
func buildApp(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "app")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/app").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	return bin
}

// TestBinaryEncryptedJobs runs an encrypted job on a worker started as
// the README starts one, with the application's key ring.
func TestBinaryEncryptedJobs(t *testing.T) {
	t.Parallel()
	bin := buildApp(t)
	b := setup(t, redistest.Backends(t)[0])
	ring, err := runtime.ParseKeyRing(testKeys)
	require.NoError(t, err)
	sealing, err := runtime.Open(b.ctx, b.url, runtime.EngineConfig{Prefix: b.prefix, Keys: ring})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sealing.Close() })
	_, err = sealing.Dispatch(b.ctx, runtime.NewPendingDispatch(secret{Text: "open sesame"}))
	require.NoError(t, err)

	cmd := exec.Command(bin, "queue:work", "--prefix", b.prefix, "--stop-when-empty")
	cmd.Env = append(os.Environ(), "REDIS_URL="+b.url, "JOBGEN_REDIS_URL=", "APP_KEYS="+testKeys)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
	require.Contains(t, stdout.String(), "handling secret open sesame\n", "stderr:\n%s", stderr.String())
	require.Contains(t, stdout.String(), "stopped (empty): 1 done, 0 released for retry, 0 failed.")
	require.Equal(t, runtime.Sizes{}, b.sizes(t, "default"))
}

// With Redis down, a command says so in one line on stderr: go-redis's
// own log lines go to the worker's logger at Debug level.
func TestBinaryRedisDownIsOneLine(t *testing.T) {
	t.Parallel()
	bin := buildApp(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "redis://" + l.Addr().String() + "/0"
	require.NoError(t, l.Close()) // nothing listens there now

	for _, args := range [][]string{{"queue:size"}, {"queue:work"}} {
		cmd := exec.Command(bin, append(args, "--redis", url)...)
		cmd.Env = append(os.Environ(), "REDIS_URL=", "JOBGEN_REDIS_URL=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		require.Equal(t, 1, exit.ExitCode())
		require.Empty(t, stdout.String())
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%v: stderr:\n%s", args, stderr.String())
		require.True(t, strings.HasPrefix(stderr.String(), "app "+args[0]+": "), stderr.String())
		require.Contains(t, stderr.String(), "connection refused")
	}
}

// An idle worker exits at once on SIGTERM, however long its --sleep:
// the stop ends its wait for jobs.
func TestBinaryIdleStopsAtOnce(t *testing.T) {
	t.Parallel()
	bin := buildApp(t)
	b := setup(t, redistest.Backends(t)[0])

	cmd := exec.Command(bin, "queue:work", "--prefix", b.prefix, "--sleep", "30s")
	cmd.Env = append(os.Environ(), "REDIS_URL="+b.url, "JOBGEN_REDIS_URL=")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "stderr:\n%s", stderr.String())
	time.Sleep(1500 * time.Millisecond) // idle, in the wait for jobs

	exited := make(chan error, 1)
	go func() {
		for lines.Scan() {
		}
		exited <- cmd.Wait()
	}()
	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		// Well within the old 1.3s; a stop takes milliseconds.
		require.Less(t, time.Since(sent), time.Second)
		require.NoError(t, err, "stderr:\n%s", stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit within 10s of SIGTERM with --sleep 30s; stderr:\n%s", stderr.String())
	}
}

// A job that outlives the grace after SIGTERM goes back to its queue,
// and the stop summary counts it as given back, apart from retries.
// A prefetched job that had not started goes back too, and counts.
func TestBinaryGraceReleaseCounts(t *testing.T) {
	t.Parallel()
	bin := buildApp(t)
	for _, tc := range []struct {
		name string
		args []string
		jobs int
	}{
		{"running", nil, 1},
		{"running and prefetched", []string{"--concurrency", "1", "--prefetch", "1"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testGraceReleaseCounts(t, bin, tc.args, tc.jobs)
		})
	}
}

func testGraceReleaseCounts(t *testing.T, bin string, args []string, jobs int) {
	b := setup(t, redistest.Backends(t)[0])
	for range jobs {
		b.push(t, "default", slow{Name: "long", For: time.Minute})
	}

	cmd := exec.Command(bin, append([]string{"queue:work", "--prefix", b.prefix, "--grace", "200ms"}, args...)...)
	cmd.Env = append(os.Environ(), "REDIS_URL="+b.url, "JOBGEN_REDIS_URL=")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	lines := bufio.NewScanner(stdout)
	var got []string
	for lines.Scan() {
		got = append(got, lines.Text())
		if lines.Text() == "handling long" {
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		}
	}
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	require.Equal(t, fmt.Sprintf("Worker stopped (SIGTERM): 0 done, 0 released for retry, %d given back at shutdown, 0 failed.", jobs), got[len(got)-1],
		"stdout:\n%s", strings.Join(got, "\n"))
	require.Equal(t, runtime.Sizes{Ready: int64(jobs)}, b.sizes(t, "default"), "the jobs are back on their queue")
}

// TestBinary runs testdata/app, a worker binary built the way an
// application builds one, as a process: queue:work stops gracefully on
// SIGTERM, letting its running job finish.
func TestBinary(t *testing.T) {
	t.Parallel()
	bin := buildApp(t)

	b := setup(t, redistest.Backends(t)[0]) // a real server, shared with the process
	b.push(t, "default", slow{Name: "report", For: time.Second})
	env := append(os.Environ(), "REDIS_URL="+b.url, "JOBGEN_REDIS_URL=")

	cmd := exec.Command(bin, "queue:work", "--prefix", b.prefix, "--grace", "20s")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	lines := bufio.NewScanner(stdout)
	var got []string
	for lines.Scan() {
		got = append(got, lines.Text())
		if lines.Text() == "handling report" {
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		}
	}
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	require.Len(t, got, 6, "stdout:\n%s", strings.Join(got, "\n"))
	require.Equal(t, "Worker processing queues default. Stop it with Ctrl-C or SIGTERM.", got[0])
	require.Equal(t, "handling report", got[1])
	require.Contains(t, got[2], " INFO     stop signal received: taking no new jobs; ")
	require.Contains(t, got[2], "signal=SIGTERM running=1 prefetched=0 grace=20s")
	require.Contains(t, got[3], " DONE     default test.Slow ")
	require.Contains(t, got[4], " INFO     worker stopped worker=worker reason=")
	require.Equal(t, "Worker stopped (SIGTERM): 1 done, 0 released for retry, 0 failed.", got[5])
	require.Zero(t, b.sizes(t, "default").Total())

	// The other commands run from the same binary, and errors exit non-zero.
	run := func(args ...string) (int, string) {
		c := exec.CommandContext(context.Background(), bin, args...)
		c.Env = env
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err)
		return 0, string(out)
	}
	code, text := run("queue:size", "--prefix", b.prefix)
	require.Equal(t, 0, code, text)
	require.Equal(t, [][]string{{"QUEUE", "READY", "DELAYED", "RESERVED", "FAILED", "PAUSED"}, {"default", "0", "0", "0", "0", "no"}}, rows(text))
	code, text = run("queue:nope")
	require.Equal(t, 2, code)
	require.Equal(t, `app: unknown command "queue:nope" (run app help for the list)`+"\n", text)
	code, text = run("queue:size", "--redis", "bogus://")
	require.Equal(t, 1, code)
	require.Equal(t, 1, strings.Count(text, "\n"), text)
}

// TestBinaryLinksNoEmbeddedServer: a worker binary built on console.Main
// links no in-process server; only runtime/embedded brings it in.
func TestBinaryLinksNoEmbeddedServer(t *testing.T) {
	t.Parallel()
	bin := buildApp(t)
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	require.NoError(t, err, "go version -m:\n%s", out)
	require.Contains(t, string(out), "github.com/redis/go-redis/v9", "the listing names the modules linked")
	require.NotContains(t, string(out), "miniredis")
	require.NotContains(t, string(out), "gopher-lua")
}
