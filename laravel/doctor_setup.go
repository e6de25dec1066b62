package laravel

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// appSetup is what a Laravel app's config/database.php, queue.php and
// cache.php make of its .env, with their defaults (Laravel 8 to 13).
type appSetup struct {
	host, port, username, password string
	tls                            bool
	db, cacheDB                    int
	// from says where host, port and db came from: "REDIS_URL", or
	// "REDIS_HOST, REDIS_PORT, REDIS_DB".
	from                          string
	urlSet                        bool   // REDIS_URL is set, and overrides REDIS_HOST, REDIS_PORT and, with a path, REDIS_DB
	prefix, prefixFrom            string // the Redis connection's prefix, and what set it
	cachePrefix                   string // the cache store's, under prefix
	queueConn, queue, cacheDriver string
	retryAfter                    string
	appKey                        string
	laravel                       int      // the app's Laravel major version, 0 if not known
	appSlugs                      []string // APP_NAME's slugs, with "_" and with "-"
	connName                      string   // the app's Redis queue connection
	// conns are config/queue.php's connections, name to driver; nil
	// when the app has no config/queue.php to read (Laravel's defaults).
	conns map[string]string
}

// laravelConnections are the connections of Laravel's own
// config/queue.php.
var laravelConnections = map[string]string{"sync": "sync", "database": "database", "beanstalkd": "beanstalkd", "sqs": "sqs", "redis": "redis"}

// slug is Laravel's Str::slug($name, '_') for the names it builds
// prefixes from: lower case, runs of anything else but letters and
// digits as one "_".
func slug(s string) string { return slugWith(s, '_') }

// slugWith is Str::slug($name, $sep).
func slugWith(s string, sep byte) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte(sep)
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), string(sep))
}

// defaultPrefixes are the Redis connection's and the cache's prefixes
// that config/database.php and config/cache.php of the app's Laravel
// version build from APP_NAME: laravel/laravel 8.x (_database_, _cache),
// 9.x to 12.x (_database_, _cache_), and 13.x's framework config
// (-database-, -cache-, the slug with "-").
func defaultPrefixes(major int, appName string) (redisPrefix, cachePrefix string) {
	switch {
	case major >= 13:
		s := slugWith(appName, '-')
		return s + "-database-", s + "-cache-"
	case major >= 9:
		return slug(appName) + "_database_", slug(appName) + "_cache_"
	}
	return slug(appName) + "_database_", slug(appName) + "_cache"
}

func readSetup(cfg DoctorConfig) (appSetup, error) {
	env := cfg.Env
	get := func(k, def string) string {
		if v, ok := env[k]; ok && v != "null" {
			return v
		}
		return def
	}
	redisPrefix, cachePrefix := defaultPrefixes(cfg.Laravel, get("APP_NAME", "laravel"))
	cacheDriver := get("CACHE_DRIVER", "file")
	if cfg.Laravel >= 11 {
		cacheDriver = get("CACHE_STORE", "database")
	}
	s := appSetup{
		host: get("REDIS_HOST", "127.0.0.1"), port: get("REDIS_PORT", "6379"), password: get("REDIS_PASSWORD", ""),
		username: get("REDIS_USERNAME", ""), from: "REDIS_HOST, REDIS_PORT, REDIS_DB",
		prefix: get("REDIS_PREFIX", redisPrefix), prefixFrom: "REDIS_PREFIX, else from APP_NAME",
		laravel: cfg.Laravel, appSlugs: []string{slug(get("APP_NAME", "laravel")), slugWith(get("APP_NAME", "laravel"), '-')},
		queueConn: get("QUEUE_CONNECTION", "sync"), queue: get("REDIS_QUEUE", "default"),
		cacheDriver: cacheDriver, retryAfter: get("REDIS_QUEUE_RETRY_AFTER", "90"),
		appKey: get("APP_KEY", ""), conns: cfg.connections(),
	}
	if cfg.Prefix != "" {
		s.prefix, s.prefixFrom = cfg.Prefix, "--prefix"
	}
	// Through 10, RedisStore::setPrefix adds a ":" to the cache prefix;
	// from 11 it takes it as it is.
	s.cachePrefix = s.prefix + get("CACHE_PREFIX", cachePrefix)
	if cfg.Laravel <= 10 {
		s.cachePrefix += ":"
	}
	var err error
	if s.db, err = strconv.Atoi(get("REDIS_DB", "0")); err != nil {
		return s, fmt.Errorf("REDIS_DB %q is not a number", get("REDIS_DB", ""))
	}
	if s.cacheDB, err = strconv.Atoi(get("REDIS_CACHE_DB", "1")); err != nil {
		return s, fmt.Errorf("REDIS_CACHE_DB %q is not a number", get("REDIS_CACHE_DB", ""))
	}
	if raw := get("REDIS_URL", ""); raw != "" {
		if err := s.applyURL(raw); err != nil {
			return s, err
		}
	}
	return s, nil
}

// applyURL reads REDIS_URL as Laravel's ConfigurationUrlParser does for
// both Redis connections, default and cache: its host, port, user and
// password override REDIS_HOST, REDIS_PORT, REDIS_USERNAME and
// REDIS_PASSWORD; its path, if any, the database of both.
func (s *appSetup) applyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("REDIS_URL %q is not a URL such as redis://127.0.0.1:6379/0", raw)
	}
	switch u.Scheme {
	case "redis", "tcp":
	case "rediss", "tls":
		s.tls = true
	default:
		return fmt.Errorf("REDIS_URL %q: scheme %q is not redis, rediss, tcp or tls", raw, u.Scheme)
	}
	s.urlSet, s.from = true, "REDIS_URL"
	s.host = u.Hostname()
	if u.Port() != "" {
		s.port = u.Port()
	}
	if u.User != nil {
		s.username = u.User.Username()
		if p, ok := u.User.Password(); ok {
			s.password = p
		}
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("REDIS_URL %q: database %q is not a number", raw, p)
		}
		s.db, s.cacheDB = n, n
	}
	return nil
}

func (s appSetup) addr() string { return net.JoinHostPort(s.host, s.port) }

// withDB returns how to set database db: in REDIS_URL's path when the
// URL is set, else REDIS_DB.
func (s appSetup) withDB(db int) string {
	if !s.urlSet {
		return "REDIS_DB=" + strconv.Itoa(db)
	}
	return "REDIS_URL=" + s.redisURL(db)
}

// redisURL is REDIS_URL as it would point at database db.
func (s appSetup) redisURL(db int) string {
	u := url.URL{Scheme: "redis", Host: s.addr(), Path: "/" + strconv.Itoa(db)}
	if s.tls {
		u.Scheme = "rediss"
	}
	if s.password != "" {
		u.User = url.UserPassword(s.username, s.password)
	}
	return u.String()
}

// withPrefix returns how to set the prefix.
func (s appSetup) withPrefix(prefix string) string {
	if s.prefixFrom == "--prefix" {
		return "--prefix " + prefix
	}
	return "REDIS_PREFIX=" + prefix
}

// URL is the bridge's connection URL for the app's queue connection.
func (s appSetup) URL() string {
	scheme := "redis"
	if s.tls {
		scheme = "rediss"
	}
	u := url.URL{Scheme: strings.TrimSuffix(Scheme, "://") + scheme, Host: s.addr(), Path: "/" + strconv.Itoa(s.db)}
	if s.password != "" {
		u.User = url.UserPassword(s.username, s.password)
	}
	q := url.Values{"prefix": {s.prefix}, "retry_after": {s.retryAfter}}
	if s.laravel > minLaravel {
		q.Set("laravel", strconv.Itoa(s.laravel))
	}
	if s.connName != "" && s.connName != "redis" {
		q.Set("connection", s.connName)
	}
	if s.cacheDriver == "redis" && s.cacheDB == s.db {
		q.Set("cache_prefix", s.cachePrefix)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// queueConnEntry finds a connection's name and driver in config/queue.php:
// 'NAME' => [ 'driver' => 'DRIVER'.
var queueConnEntry = regexp.MustCompile(`['"]([A-Za-z0-9_.-]+)['"]\s*=>\s*\[\s*['"]driver['"]\s*=>\s*['"]([a-z]+)['"]`)

// connections returns config/queue.php's connections, or nil without one.
func (cfg DoctorConfig) connections() map[string]string {
	if cfg.QueueConfig == "" {
		return nil
	}
	out := map[string]string{}
	for _, m := range queueConnEntry.FindAllStringSubmatch(cfg.QueueConfig, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// redisConnections returns the names of the app's connections on Redis,
// sorted.
func (s appSetup) redisConnections() []string {
	conns := s.conns
	if conns == nil {
		conns = laravelConnections
	}
	var out []string
	for name, driver := range conns {
		if driver == "redis" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
