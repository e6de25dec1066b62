package console_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/schedule"
)

// The dashboard command serves the dashboard of the prefix on the address
// given, behind basic authentication when a password is set, until its
// context ends.
func TestDashboardCommand(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	b.push(t, "mail", greet{Name: "ada"})
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan int, 1)
	go func() {
		c := &console.Command{Name: "app", Stdout: io.Discard, Stderr: pw,
			Getenv: func(k string) string { return map[string]string{console.DashboardPasswordEnv: "s3cret"}[k] }}
		done <- c.Run(ctx, []string{"dashboard", "--addr", "127.0.0.1:0", "--redis", b.url, "--prefix", b.prefix})
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Contains(t, line, "Dashboard of prefix "+b.prefix+" on http://127.0.0.1:")
	url := strings.Fields(line[strings.Index(line, "http://"):])[0]

	res, err := http.Get(url)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)

	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "s3cret")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), `href="./queues/mail"`)
	require.NotContains(t, string(body), `>Periodic</a>`, "no schedule, no link")

	// Without the application's schedule, the periodic jobs page says
	// how to give it one.
	req, err = http.NewRequest(http.MethodGet, url+"schedule", nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "s3cret")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err = io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), "console.WithSchedule(s)")

	cancel()
	require.Equal(t, 0, <-done)
}

// An application's binary serves its schedule on the dashboard.
func TestDashboardCommandShowsTheSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	s := schedule.New()
	s.Hourly(greet{Name: "hourly"}).Name("greet-hourly")
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan int, 1)
	go func() {
		c := &console.Command{Name: "app", Stdout: io.Discard, Stderr: pw, Getenv: func(string) string { return "" }}
		console.WithSchedule(s)(c)
		done <- c.Run(ctx, []string{"dashboard", "--addr", "127.0.0.1:0", "--redis", b.url, "--prefix", b.prefix})
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url := strings.Fields(line[strings.Index(line, "http://"):])[0]

	res, err := http.Get(url + "schedule")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), `>Periodic</a>`)
	require.Contains(t, string(body), "greet-hourly")
	require.Contains(t, string(body), "0 * * * *")

	cancel()
	require.Equal(t, 0, <-done)
}

// TestDashboardRefusesOpenAddrWithoutPassword: listening beyond loopback
// with no password is refused with a message that says how to set one or
// accept the risk.
func TestDashboardRefusesOpenAddrWithoutPassword(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		code, _, stderr := b.run(t, "dashboard", "--addr", addr)
		require.Equal(t, 1, code, addr)
		require.Contains(t, stderr, "no password is set", addr)
		require.Contains(t, stderr, "--insecure")
		require.Contains(t, stderr, console.DashboardPasswordEnv)
	}
}
