package console_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

var allVerbs = []string{
	"queue:work", "queue:failed", "queue:retry", "queue:forget", "queue:flush", "queue:prune-failed", "queue:job", "queue:cancel",
	"queue:workflow", "queue:workflow-cancel", "queue:workflow-retry",
	"queue:clear", "queue:restart", "queue:pause", "queue:resume", "queue:limit", "queue:size", "queue:monitor", "queue:monitor-tag", "queue:metrics",
	"schedule:work", "schedule:run", "schedule:list", "schedule:test", "schedule:pause", "schedule:resume",
	"dashboard",
}

// runNoRedis runs a command that must not need Redis.
func runNoRedis(c *console.Command, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	c.Name, c.Stdout, c.Stderr = "app", &out, &errOut
	c.Getenv = func(string) string { return "" }
	code := c.Run(context.Background(), args)
	return code, out.String(), errOut.String()
}

func TestHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	for _, v := range allVerbs {
		for _, help := range []string{"--help", "-h", "-help"} {
			code, stdout, stderr := runNoRedis(&console.Command{}, v, help)
			require.Equal(t, 0, code, "%s %s: %s", v, help, stderr)
			require.Empty(t, stderr)
			require.True(t, strings.HasPrefix(stdout, "Usage: app "+v), stdout)
			require.Contains(t, stdout, "--redis URL")
			require.Contains(t, stdout, "(default $JOBGEN_REDIS_URL, then $REDIS_URL)")
			require.Contains(t, stdout, "--prefix PREFIX")
		}
		// help <command> is the same as <command> --help.
		_, viaHelp, _ := runNoRedis(&console.Command{}, "help", v)
		_, direct, _ := runNoRedis(&console.Command{}, v, "--help")
		require.Equal(t, direct, viaHelp)
	}
}

// --prefix defaults to the prefix of the Command's Engine, as help says.
func TestHelpShowsTheEnginePrefix(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runNoRedis(&console.Command{}, "queue:size", "--help")
	require.Contains(t, stdout, `(default "jobgen")`)
	_, stdout, _ = runNoRedis(&console.Command{Engine: runtime.EngineConfig{Prefix: "myapp"}}, "queue:size", "--help")
	require.Contains(t, stdout, `(default "myapp")`)
	require.NotContains(t, stdout, `"jobgen"`)
}

func TestWorkHelpListsEveryOption(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runNoRedis(&console.Command{}, "queue:work", "--help")
	for _, flag := range []string{
		"--queue high,default,low", "--concurrency", "--sleep", "--rest", "--tries", "--backoff 1s,5s,30s",
		"exp:BASE,MAX", "--timeout", "--retry-after", "--max-jobs", "--max-time", "--memory MB", "--max-jobs N", "--grace DURATION", "--once",
		"--stop-when-empty", "--name", "--grace", "--quiet",
	} {
		require.Contains(t, stdout, flag)
	}
	require.Contains(t, stdout, "jobs run at once (default 10)")

	// Defaults set by the application show as the defaults.
	_, stdout, _ = runNoRedis(&console.Command{Worker: runtime.WorkerConfig{Concurrency: 32}}, "queue:work", "--help")
	require.Contains(t, stdout, "jobs run at once (default 32)")
}

func TestOverview(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runNoRedis(&console.Command{}, "help")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(stdout, "Usage: app <command>"))
	for _, v := range allVerbs {
		require.Contains(t, stdout, "  "+v+" ")
	}
	require.Regexp(t, `queue:work +`+regexp.QuoteMeta("Process jobs from the queues until stopped (from your own binary: console.Main)"), stdout)

	_, stdout, _ = runNoRedis(&console.Command{Router: runtime.NewRouter()}, "list")
	require.NotContains(t, stdout, "console.Main")

	code, _, stderr := runNoRedis(&console.Command{})
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "Usage: app <command>")
}

func TestHandles(t *testing.T) {
	t.Parallel()
	require.True(t, console.Handles([]string{"queue:work", "--once"}))
	require.True(t, console.Handles([]string{"help"}))
	require.False(t, console.Handles([]string{"serve"}))
	require.False(t, console.Handles(nil))
}

func TestUsageErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"queue:nope"}, `app: unknown command "queue:nope" (run app help for the list)`},
		{[]string{"queue:size", "--bogus"}, "app queue:size: flag provided but not defined: --bogus (see app queue:size --help)"},
		{[]string{"queue:work", "--concurrency", "many"}, `app queue:work: invalid value "many" for flag --concurrency: parse error (see app queue:work --help)`},
		{[]string{"queue:work", "--sleep", "soon"}, `app queue:work: invalid value "soon" for flag --sleep: "soon" is neither a duration (90s, 1m30s) nor a number of seconds`},
		{[]string{"queue:work", "--backoff", "exp:1s"}, `app queue:work: invalid value "exp:1s" for flag --backoff: exponential backoff "exp:1s": want exp:BASE,MAX, such as exp:1s,5m`},
		{[]string{"queue:work", "--backoff", "1s,-2s"}, `negative delay -2s`},
		{[]string{"queue:restart", "now"}, `app queue:restart: unexpected argument "now" (see app queue:restart --help)`},
		{[]string{"queue:work", "default"}, `app queue:work: unexpected argument "default"`},
		{[]string{"queue:work", "--queue", "high,a#b"}, `app queue:work: invalid value "high,a#b" for flag --queue: queue name "a#b" contains "#", which is kept for the names of partitions (queue#1) (see app queue:work --help)`},
		{[]string{"queue:work", "--queue", "a{b}"}, `app queue:work: invalid value "a{b}" for flag --queue: queue name "a{b}" contains "{", which would break its cluster hash tag`},
		{[]string{"queue:failed", "--queue", "a#b"}, `app queue:failed: invalid value "a#b" for flag --queue: queue name "a#b" contains "#"`},
		{[]string{"queue:size", "--partitions", "a#b=2"}, `app queue:size: invalid value "a#b=2" for flag --partitions: queue name "a#b" contains "#"`},
		{[]string{"queue:size", "--partitions", "a}b=2"}, `app queue:size: invalid value "a}b=2" for flag --partitions: queue name "a}b" contains "}", which would break its cluster hash tag (see app queue:size --help)`},
		{[]string{"queue:work", "--queue", strings.Repeat("q", 201)}, `for flag --queue: queue name "qqqqqqqqqqqqqqqqqqqq"... is longer than 200 bytes (see app queue:work --help)`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runNoRedis(&console.Command{Router: runtime.NewRouter()}, tt.args...)
		require.Equal(t, 2, code, "%v: %s", tt.args, stderr)
		require.Empty(t, stdout)
		require.Contains(t, oneLine(t, stderr), tt.want, "%v", tt.args)
	}
}

func TestNoRedisURL(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runNoRedis(&console.Command{}, "queue:size")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "app queue:size: no Redis URL: pass --redis URL or set JOBGEN_REDIS_URL (or REDIS_URL), for example redis://127.0.0.1:6379/0", oneLine(t, stderr))
}

func TestRedisErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url, want string
	}{
		{"bogus://x", `app queue:size: invalid input: Redis URL scheme "bogus"`},
		{"redis://127.0.0.1:1/0", "cannot reach Redis at 127.0.0.1:1: "},
		{"redis://:secret@127.0.0.1:1/0", "redis://:xxxxx@127.0.0.1:1/0"},
	}
	for _, tt := range tests {
		code, _, stderr := runNoRedis(&console.Command{}, "queue:size", "--redis", tt.url)
		require.Equal(t, 1, code)
		line := oneLine(t, stderr)
		require.Contains(t, line, tt.want)
		require.NotContains(t, line, "secret")
	}
}

func TestWorkNeedsRouter(t *testing.T) {
	t.Parallel()
	code, _, stderr := runNoRedis(&console.Command{}, "queue:work", "--redis", "embedded://")
	require.Equal(t, 1, code)
	require.Contains(t, oneLine(t, stderr), "app queue:work: needs the application's job handlers")
	require.Contains(t, stderr, "console.Main(router)")
}

// The URL comes from --redis, else JOBGEN_REDIS_URL, else REDIS_URL: the
// variable the application dispatches with wins over a generic one that a
// platform may set for another Redis.
func TestURLSources(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	b.push(t, "mail", greet{"ada"})
	bad := "bogus://nowhere"
	tests := []struct {
		name     string
		env      map[string]string
		flag     string
		wantCode int
	}{
		{"flag wins over env", map[string]string{"REDIS_URL": bad, runtime.URLEnv: bad}, b.url, 0},
		{"JOBGEN_REDIS_URL", map[string]string{"REDIS_URL": bad, runtime.URLEnv: b.url}, "", 0},
		{"REDIS_URL fallback", map[string]string{"REDIS_URL": b.url}, "", 0},
		{"JOBGEN_REDIS_URL before the fallback", map[string]string{"REDIS_URL": b.url, runtime.URLEnv: bad}, "", 1},
	}
	for _, tt := range tests {
		b.env = tt.env
		args := []string{"queue:size", "--prefix", b.prefix}
		if tt.flag != "" {
			args = append(args, "--redis", tt.flag)
		}
		code, stdout, stderr := b.runRaw(t, args...)
		require.Equal(t, tt.wantCode, code, "%s: %s", tt.name, stderr)
		if code == 0 {
			require.Contains(t, stdout, "mail ", tt.name)
		}
	}
}

// TestEvictingRedisIsRefused: a command on a Redis whose
// maxmemory-policy may evict keys exits with a message that says why and
// how to override; --allow-eviction runs it. (runtime's test of the same
// name covers the worker.)
func TestEvictingRedisIsRefused(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = rdb.Close() }()
	require.NoError(t, rdb.ConfigSet(context.Background(), "maxmemory-policy", "allkeys-lru").Err())
	url := "redis://" + srv.Addr + "/0"

	code, _, stderr := runNoRedis(&console.Command{}, "queue:size", "--redis", url)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "maxmemory-policy allkeys-lru")
	require.Contains(t, stderr, "--allow-eviction")

	code, _, stderr = runNoRedis(&console.Command{}, "queue:size", "--redis", url, "--allow-eviction")
	require.Equal(t, 0, code, stderr)
}
