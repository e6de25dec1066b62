package laravel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// ReadEnv reads a Laravel app's .env file: KEY=VALUE lines, # comments,
// values in single or double quotes, "export " before a key, and ${KEY}
// in double-quoted or bare values for a key set above it.
func ReadEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: not KEY=VALUE: %q", path, n, line)
		}
		env[strings.TrimSpace(k)] = envValue(strings.TrimSpace(v), env)
	}
	return env, sc.Err()
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

func envValue(v string, env map[string]string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		v = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
	default:
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
	}
	return envRef.ReplaceAllStringFunc(v, func(m string) string { return env[m[2:len(m)-1]] })
}

// DoctorConfig is what Doctor checks.
type DoctorConfig struct {
	// Env is the app's environment: its .env (ReadEnv), with the
	// process's variables over it, as Laravel's Dotenv leaves a variable
	// already set alone.
	Env map[string]string
	// QueueConfig is the text of the app's config/queue.php, or "" to
	// take Laravel's own (connections sync, database, beanstalkd, sqs and
	// redis). The doctor reads its connections' names and drivers.
	QueueConfig string
	// Prefix, if set, is the Redis connection's prefix to check, in place
	// of the one .env gives (REDIS_PREFIX, else APP_NAME's): for an app
	// that sets it in config/database.php.
	Prefix string
	// FailedConnection is FailedJobs.Connection of the Go workers that
	// write the app's failed_jobs table, "" for FailedJobs' default,
	// "redis". It must name the app's Redis queue connection.
	FailedConnection string
	// FailedStore is the URL of jobgen's failed store (JOBGEN_REDIS_URL),
	// or "".
	FailedStore string
	// Laravel is the app's Laravel major version (LaravelVersion reads
	// it from composer.lock), or 0 if not known: the defaults of its
	// config files (prefixes, CACHE_STORE from 11) are that version's.
	Laravel int
}

// LaravelVersion returns the major version of laravel/framework that
// an app's composer.lock pins, and 0 if it pins none.
func LaravelVersion(composerLock []byte) (int, error) {
	var lock struct {
		Packages []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(composerLock, &lock); err != nil {
		return 0, fmt.Errorf("composer.lock: %w", err)
	}
	for _, p := range lock.Packages {
		if p.Name != "laravel/framework" {
			continue
		}
		major, _, _ := strings.Cut(strings.TrimPrefix(p.Version, "v"), ".")
		n, err := strconv.Atoi(major)
		if err != nil {
			return 0, fmt.Errorf("composer.lock: laravel/framework version %q is not vMAJOR.MINOR.PATCH", p.Version)
		}
		return n, nil
	}
	return 0, nil
}

// Doctor checks a Laravel app's setup for the bridge and writes what it
// finds to out, one line each: OK, WARN or FAIL, in plain words, each
// problem with its fix. It finds the app's queues where they are, on
// the Redis server REDIS_URL or REDIS_HOST names, in any of its
// databases and under any prefix, and names the setting that points
// elsewhere. It returns false if a check failed.
func Doctor(ctx context.Context, cfg DoctorConfig, out io.Writer) bool {
	ok := true
	say := func(level, format string, args ...any) {
		fmt.Fprintf(out, "%-4s %s\n", level, fmt.Sprintf(format, args...))
		if level == "FAIL" {
			ok = false
		}
	}
	s, err := readSetup(cfg)
	if err != nil {
		say("FAIL", "%v", err)
		return false
	}
	if cfg.Laravel == 0 {
		say("INFO", "the app's Laravel version is not known (no composer.lock beside the .env): Laravel 8's defaults are assumed")
	} else {
		say("OK", "Laravel %d (composer.lock): its config files' defaults apply", cfg.Laravel)
	}
	conn := checkConnection(s, say)
	s.connName = conn
	checkFailedConnection(conn, cfg.FailedConnection, say)
	found := checkRedis(ctx, cfg, s, say)
	if found {
		checkCache(s, say)
	}
	checkFailedStore(s, cfg.FailedStore, say)
	if tz := cfg.Env["APP_TIMEZONE"]; tz != "" && tz != "UTC" && cfg.Laravel >= 11 {
		say("INFO", "the app's timezone is %s (APP_TIMEZONE): Laravel writes failed_at in it; give the Go workers laravel.FailedJobs{Timezone: time.LoadLocation(%q)}", tz, tz)
	}
	if s.appKey == "" {
		say("WARN", "APP_KEY is not set: encrypted (ShouldBeEncrypted) jobs cannot be opened without it (laravel.NewEncrypter)")
	}
	if ok {
		say("OK", "the bridge's URL: %s", s.URL())
	} else {
		say("INFO", "the bridge's URL as the app is set up now (fix the FAIL lines first): %s", s.URL())
	}
	return ok
}

// checkConnection checks QUEUE_CONNECTION against config/queue.php, and
// returns the name of the app's Redis queue connection ("" if none).
func checkConnection(s appSetup, say func(level, format string, args ...any)) string {
	redisConns := s.redisConnections()
	conns, from := s.conns, "config/queue.php"
	if conns == nil {
		conns, from = laravelConnections, "Laravel's default config/queue.php; give the app's with --config"
	}
	driver, known := conns[s.queueConn]
	switch {
	case !known:
		fix := "name one of its connections"
		if len(redisConns) > 0 {
			fix = "set QUEUE_CONNECTION=" + redisConns[0]
		}
		say("FAIL", "QUEUE_CONNECTION is %q, which %s does not define: Laravel fails with \"The [%s] queue connection has not been configured\"; %s", s.queueConn, from, s.queueConn, fix)
	case driver == "redis":
		say("OK", "QUEUE_CONNECTION %q is a Redis connection (%s)", s.queueConn, from)
		return s.queueConn
	case len(redisConns) == 0:
		say("FAIL", "QUEUE_CONNECTION %q has driver %q, and %s has no connection with driver redis: the app queues nothing on Redis; add one", s.queueConn, driver, from)
	default:
		say("WARN", "QUEUE_CONNECTION %q has driver %q: only jobs dispatched with onConnection(%q) reach Redis and the bridge; set QUEUE_CONNECTION=%s to send them all", s.queueConn, driver, redisConns[0], redisConns[0])
	}
	if len(redisConns) > 0 {
		return redisConns[0]
	}
	return ""
}

// checkFailedConnection checks FailedJobs.Connection against the app's
// Redis queue connection, which queue:retry pushes back through.
func checkFailedConnection(conn, failed string, say func(level, format string, args ...any)) {
	if conn == "" {
		return
	}
	if failed == "" {
		failed = "redis"
	}
	if failed != conn {
		say("FAIL", "the Go workers record failed jobs with FailedJobs.Connection %q, and the app's Redis queue connection is %q: php artisan queue:retry would fail with \"The [%s] queue connection has not been configured\"; set laravel.FailedJobs{Connection: %q} (then run the doctor with --failed-connection %s)", failed, conn, failed, conn, conn)
		return
	}
	say("OK", "FailedJobs.Connection %q is the app's Redis queue connection: queue:retry puts Go's failed jobs back", failed)
}

// checkRedis finds the app's queues: where the setup says, else in
// another database or under another prefix of its server, or on the
// server of REDIS_HOST and REDIS_PORT when REDIS_URL points elsewhere.
// It reports whether they are where the setup says (or nothing is
// queued anywhere yet).
func checkRedis(ctx context.Context, cfg DoctorConfig, s appSetup, say func(level, format string, args ...any)) bool {
	servers := []redisServer{{addr: s.addr(), from: s.from}}
	if s.urlSet {
		env := maps.Clone(cfg.Env)
		delete(env, "REDIS_URL")
		if alt, err := readSetup(DoctorConfig{Env: env}); err == nil && alt.addr() != s.addr() {
			servers = append(servers, redisServer{addr: alt.addr(), from: "REDIS_HOST, REDIS_PORT"})
		}
	}
	var places []queuePlace
	answered := false
	for i, srv := range servers {
		found, err := scanServer(ctx, s, srv.addr)
		if err != nil {
			if i == 0 {
				say("FAIL", "Redis at %s (database %d, from %s) does not answer: %v", srv.addr, s.db, srv.from, err)
			}
			continue
		}
		if i == 0 {
			answered = true
			say("OK", "Redis at %s (from %s) answers", srv.addr, srv.from)
		}
		for _, p := range found {
			p.addr, p.from = srv.addr, srv.from
			places = append(places, p)
		}
	}
	for _, p := range places {
		if answered && p.addr == s.addr() && p.db == s.db && p.prefix == s.prefix {
			say("OK", "queues in database %d under the prefix %q: %s", s.db, s.prefix, strings.Join(p.queues, ", "))
			return true
		}
	}
	if len(places) == 0 {
		if answered {
			say("WARN", "no queue in database %d under the prefix %q, nor anywhere else on %s: nothing has been queued yet, or the app's Redis is another server", s.db, s.prefix, s.addr())
		}
		return answered
	}
	rankPlaces(places, s)
	best := places[0]
	say("FAIL", "no queue where the app's setup points (%s, database %d, prefix %q); %s: set %s", s.addr(), s.db, s.prefix, best.describe(), best.fix(s))
	var others []string
	for _, p := range places[1:min(len(places), 4)] {
		others = append(others, p.describe())
	}
	if len(places) > 4 {
		others = append(others, fmt.Sprintf("and %d more", len(places)-4))
	}
	if len(others) > 0 {
		say("INFO", "if those are another app's: %s", strings.Join(others, "; "))
	}
	return false
}

type redisServer struct{ addr, from string }
