package laravel

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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

// appSetup is what a Laravel 8 app's config/database.php, queue.php and
// cache.php make of its .env, with their defaults.
type appSetup struct {
	host, port, password          string
	db, cacheDB                   int
	prefix, cachePrefix           string // the Redis connection's prefix; the cache store's
	queueConn, queue, cacheDriver string
	retryAfter                    string
	appKey                        string
}

// slug is Laravel's Str::slug($name, '_') for the names it builds
// prefixes from: lower case, runs of anything else but letters and
// digits as one "_".
func slug(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

func readSetup(env map[string]string) (appSetup, error) {
	get := func(k, def string) string {
		if v, ok := env[k]; ok && v != "null" {
			return v
		}
		return def
	}
	app := slug(get("APP_NAME", "laravel"))
	s := appSetup{
		host: get("REDIS_HOST", "127.0.0.1"), port: get("REDIS_PORT", "6379"), password: get("REDIS_PASSWORD", ""),
		prefix:    get("REDIS_PREFIX", app+"_database_"),
		queueConn: get("QUEUE_CONNECTION", "sync"), queue: get("REDIS_QUEUE", "default"),
		cacheDriver: get("CACHE_DRIVER", "file"), retryAfter: get("REDIS_QUEUE_RETRY_AFTER", "90"),
		appKey: get("APP_KEY", ""),
	}
	s.cachePrefix = s.prefix + get("CACHE_PREFIX", app+"_cache") + ":"
	var err error
	if s.db, err = strconv.Atoi(get("REDIS_DB", "0")); err != nil {
		return s, fmt.Errorf("REDIS_DB %q is not a number", get("REDIS_DB", ""))
	}
	if s.cacheDB, err = strconv.Atoi(get("REDIS_CACHE_DB", "1")); err != nil {
		return s, fmt.Errorf("REDIS_CACHE_DB %q is not a number", get("REDIS_CACHE_DB", ""))
	}
	return s, nil
}

// URL is the bridge's connection URL for the app's queue connection.
func (s appSetup) URL() string {
	u := url.URL{Scheme: strings.TrimSuffix(Scheme, "://") + "redis", Host: net.JoinHostPort(s.host, s.port), Path: "/" + strconv.Itoa(s.db)}
	if s.password != "" {
		u.User = url.UserPassword("", s.password)
	}
	q := url.Values{"prefix": {s.prefix}, "retry_after": {s.retryAfter}}
	if s.cacheDriver == "redis" && s.cacheDB == s.db {
		q.Set("cache_prefix", s.cachePrefix)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Doctor checks a Laravel app's setup for the bridge, from its .env
// (ReadEnv), and writes what it finds to out, one line each: OK, WARN or
// FAIL, in plain words. failedStore is the URL of jobgen's failed store
// (JOBGEN_REDIS_URL), or "". It returns false if a check failed.
func Doctor(ctx context.Context, env map[string]string, failedStore string, out io.Writer) bool {
	ok := true
	say := func(level, format string, args ...any) {
		fmt.Fprintf(out, "%-4s %s\n", level, fmt.Sprintf(format, args...))
		if level == "FAIL" {
			ok = false
		}
	}
	s, err := readSetup(env)
	if err != nil {
		say("FAIL", "%v", err)
		return false
	}
	if s.queueConn != "redis" {
		say("WARN", "QUEUE_CONNECTION is %q: the app queues on Redis only with QUEUE_CONNECTION=redis", s.queueConn)
	}
	rdb := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(s.host, s.port), Password: s.password, DB: s.db, DialTimeout: 2 * time.Second, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		say("FAIL", "Redis at %s (database %d, from REDIS_HOST, REDIS_PORT, REDIS_DB) does not answer: %v", net.JoinHostPort(s.host, s.port), s.db, err)
		return false
	}
	say("OK", "Redis at %s answers; the queues are in database %d", net.JoinHostPort(s.host, s.port), s.db)
	checkQueues(ctx, rdb, s, say)
	checkCache(s, say)
	checkFailedStore(s, failedStore, say)
	if s.appKey == "" {
		say("WARN", "APP_KEY is not set: encrypted (ShouldBeEncrypted) jobs cannot be opened without it (laravel.NewEncrypter)")
	}
	say("OK", "the bridge's URL: %s", s.URL())
	return ok
}

// checkQueues lists the queues under the prefix, and looks for them
// under other prefixes when there are none.
func checkQueues(ctx context.Context, rdb *redis.Client, s appSetup, say func(level, format string, args ...any)) {
	mine := queuesUnder(ctx, rdb, s.prefix+"queues:*", s.prefix)
	if len(mine) > 0 {
		say("OK", "queues under the prefix %q: %s", s.prefix, strings.Join(mine, ", "))
		return
	}
	others := map[string]bool{}
	iter := rdb.Scan(ctx, 0, "*queues:*", 1000).Iterator()
	for iter.Next(ctx) && len(others) < 10 {
		if i := strings.Index(iter.Val(), "queues:"); i >= 0 && iter.Val()[:i] != s.prefix {
			others[iter.Val()[:i]] = true
		}
	}
	if len(others) == 0 {
		say("WARN", "no queue under the prefix %q yet, and none under another: nothing has been queued, or the database is not the app's", s.prefix)
		return
	}
	list := make([]string, 0, len(others))
	for p := range others {
		list = append(list, strconv.Quote(p))
	}
	slices.Sort(list)
	say("WARN", "no queue under the prefix %q (REDIS_PREFIX, else APP_NAME's slug + \"_database_\"), while %s hold some: a worker on this prefix would wait forever", s.prefix, strings.Join(list, ", "))
}

func queuesUnder(ctx context.Context, rdb *redis.Client, match, prefix string) []string {
	seen := map[string]bool{}
	iter := rdb.Scan(ctx, 0, match, 1000).Iterator()
	for iter.Next(ctx) {
		name := strings.TrimPrefix(iter.Val(), prefix+"queues:")
		for _, suffix := range []string{":delayed", ":reserved", ":notify"} {
			name = strings.TrimSuffix(name, suffix)
		}
		seen[name] = true
	}
	out := make([]string, 0, len(seen))
	for q := range seen {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}

// checkCache says whether Go can see the cache store, which holds
// queue:restart's signal and the shared maxExceptions counts.
func checkCache(s appSetup, say func(level, format string, args ...any)) {
	switch {
	case s.cacheDriver != "redis":
		say("WARN", "CACHE_DRIVER is %q: queue:restart and maxExceptions live in the cache store, which Go reads only on Redis; with %q, php artisan queue:restart does not stop Go workers, and maxExceptions is counted per side", s.cacheDriver, s.cacheDriver)
	case s.cacheDB != s.db:
		say("WARN", "the cache is in Redis database %d (REDIS_CACHE_DB), the queues in %d: the bridge reads the cache in the queues' database, so queue:restart and maxExceptions do not reach Go workers; set REDIS_CACHE_DB=%d", s.cacheDB, s.db, s.db)
	default:
		say("OK", "the cache store is Redis, in the queues' database, under %q: queue:restart and maxExceptions reach Go workers", s.cachePrefix)
	}
}

// checkFailedStore warns when jobgen's failed store is in the database
// that php artisan cache:clear flushes.
func checkFailedStore(s appSetup, failedStore string, say func(level, format string, args ...any)) {
	if failedStore == "" {
		return
	}
	u, err := url.Parse(failedStore)
	if err != nil {
		say("WARN", "the failed store's URL does not parse: %v", err)
		return
	}
	db := 0
	if p := strings.Trim(u.Path, "/"); p != "" {
		db, _ = strconv.Atoi(p)
	}
	host, port := u.Hostname(), cmp.Or(u.Port(), "6379")
	if sameHost(host, s.host) && port == s.port && s.cacheDriver == "redis" && db == s.cacheDB {
		say("WARN", "jobgen's failed store (%s) is the cache's database %d: php artisan cache:clear flushes it, and its failed jobs with it; give it a database of its own", failedStore, db)
		return
	}
	say("OK", "jobgen's failed store is apart from the cache that cache:clear flushes")
}

func sameHost(a, b string) bool {
	loop := func(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }
	return a == b || (loop(a) && loop(b))
}
