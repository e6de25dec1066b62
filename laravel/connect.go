package laravel

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/laravel/phpserial"
	"github.com/jobgen/jobgen/runtime"
)

// Scheme starts the URL of a Laravel connection: laravel+ and then one of
// the Redis URL forms runtime.Open takes, redis://, rediss://,
// redis+sentinel:// or redis+cluster://.
const Scheme = "laravel+"

// Open connects to the Laravel queue connection named by rawURL, such as
//
//	laravel+redis://127.0.0.1:6379/0?prefix=laravel_database_&retry_after=90
//
// Its query parameters set Config, the others go to the Redis URL:
//
//	prefix        Config.Prefix (default none: give the app's)
//	retry_after   Config.RetryAfter, in seconds (default 90)
//	block_for     Config.BlockFor, in seconds (default 0)
//	cache_prefix  Config.CachePrefix, to read queue:restart
//	hash_tag      1 for Config.HashTag (implied by redis+cluster)
//	laravel       Config.Laravel, the app's major version (default 8)
//	connection    Config.Connection, the connection's name (default redis)
//
// Close the returned function when done.
func Open(ctx context.Context, rawURL string) (*Queue, func() error, error) {
	rest, ok := strings.CutPrefix(rawURL, Scheme)
	if !ok {
		return nil, nil, fmt.Errorf("%w: Laravel connection URL must start with %s (as in laravel+redis://host:6379/0)", runtime.ErrInvalid, Scheme)
	}
	u, err := url.Parse(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: Laravel connection URL does not parse", runtime.ErrInvalid)
	}
	var cfg Config
	q := u.Query()
	secs := func(name string) (time.Duration, error) {
		v := q.Get(name)
		q.Del(name)
		if v == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: Laravel connection URL: %s=%q: want whole seconds", runtime.ErrInvalid, name, v)
		}
		return time.Duration(n) * time.Second, nil
	}
	if cfg.RetryAfter, err = secs("retry_after"); err != nil {
		return nil, nil, err
	}
	if cfg.BlockFor, err = secs("block_for"); err != nil {
		return nil, nil, err
	}
	if v := q.Get("laravel"); v != "" {
		if cfg.Laravel, err = strconv.Atoi(v); err != nil {
			return nil, nil, fmt.Errorf("%w: Laravel connection URL: laravel=%q: want a major version, such as 12", runtime.ErrInvalid, v)
		}
	}
	cfg.Prefix, cfg.CachePrefix, cfg.Connection = q.Get("prefix"), q.Get("cache_prefix"), q.Get("connection")
	cfg.HashTag = q.Get("hash_tag") == "1" || strings.HasSuffix(u.Scheme, "+cluster")
	for _, k := range []string{"prefix", "cache_prefix", "hash_tag", "laravel", "connection"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	rdb, closer, err := runtime.OpenClient(u.String())
	if err != nil {
		return nil, nil, err
	}
	queue, err := NewQueue(rdb, cfg)
	if err != nil {
		_ = closer()
		return nil, nil, err
	}
	return queue, closer, nil
}

// restartValue reads the value Laravel's cache stores for
// illuminate:queue:restart: a bare number (the redis store keeps
// numbers as they are), or serialize() of one.
func restartValue(s string) (int64, bool, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true, nil
	}
	v, err := phpserial.Unmarshal([]byte(s))
	if err == nil {
		switch v := v.(type) {
		case int64:
			return v, true, nil
		case float64:
			return int64(v), true, nil
		case string:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n, true, nil
			}
		}
	}
	return 0, false, fmt.Errorf("laravel: queue:restart signal %.40q is not a time", s)
}
