package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/internal/urlscheme"
)

// URLEnv is the environment variable the CLI and examples read the Redis
// URL from.
const URLEnv = "JOBGEN_REDIS_URL"

// Open connects to the Redis named by rawURL and returns an engine that
// owns the connection; Close it when done. The URL forms are:
//
//	redis://[user:password@]host:port[/db]          one server
//	rediss://...                                    the same, over TLS
//	redis+sentinel://[:password@]host:port[,host:port...]/mastername[/db]
//	redis+cluster://[user:password@]host:port[,host:port...]
//	embedded://[name]                               in-process server
//
// rediss+sentinel and rediss+cluster use TLS. Query parameters of the
// redis:// form (dial_timeout, pool_size, ...) are go-redis's.
//
// embedded:// starts an in-process Redis-protocol server (miniredis) that
// runs the same Lua scripts; it keeps nothing on disk and lives until the
// last engine on it is closed. Engines opened with the same name in one
// process share a server. It is for quickstarts and tests: a program has
// it only if it imports runtime/embedded (jobtest does), so production
// binaries do not link it, and it is only used when asked for by name:
// an empty URL is an error, never a fallback.
//
// A rediss:// URL is checked first with a TLS handshake of its own: a
// server that speaks plain Redis fails at once with ErrTLSMismatch, not
// at the end of the client's retries. A Redis that cannot be reached
// fails with ErrUnreachable, naming its address.
func Open(ctx context.Context, rawURL string, cfg EngineConfig) (*Engine, error) {
	rdb, closer, err := openClient(rawURL)
	if err != nil {
		return nil, err
	}
	if c, ok := rdb.(*redis.Client); ok && c.Options().TLSConfig != nil {
		opt := c.Options()
		if err := probeTLS(ctx, opt.Addr, opt.TLSConfig, opt.DialTimeout); err != nil {
			_ = closer()
			return nil, fmt.Errorf("%w (URL %s)", err, redactURL(rawURL))
		}
	}
	e, err := NewEngine(ctx, rdb, cfg)
	if err != nil {
		_ = closer()
		return nil, fmt.Errorf("%w (URL %s)", startError(err), redactURL(rawURL))
	}
	e.closer = closer
	return e, nil
}

// OpenClient returns a go-redis client for rawURL, in the forms Open
// takes, and a function that closes it.
func OpenClient(rawURL string) (redis.UniversalClient, func() error, error) {
	return openClient(rawURL)
}

func openClient(rawURL string) (redis.UniversalClient, func() error, error) {
	jobrdb.QuietLog()
	if strings.TrimSpace(rawURL) == "" {
		return nil, nil, fmt.Errorf("%w: set %s (or pass a URL), for example redis://127.0.0.1:6379/0, or embedded:// for an in-process server", ErrNoURL, URLEnv)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("%w: Redis URL is not a valid URL: %v", ErrInvalid, err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: Redis URL %s: %v", ErrInvalid, redactURL(rawURL), err)
		}
		c := redis.NewClient(opt)
		return c, c.Close, nil
	case "redis+sentinel", "rediss+sentinel":
		return openSentinel(u)
	case "redis+cluster", "rediss+cluster":
		opt := &redis.ClusterOptions{Addrs: strings.Split(u.Host, ",")}
		if u.User != nil {
			opt.Username = u.User.Username()
			opt.Password, _ = u.User.Password()
		}
		if u.Scheme == "rediss+cluster" {
			opt.TLSConfig = tlsConfig(opt.Addrs[0])
		}
		c := redis.NewClusterClient(opt)
		return c, c.Close, nil
	case "embedded":
		open, ok := urlscheme.Lookup("embedded")
		if !ok {
			return nil, nil, fmt.Errorf("%w: embedded:// needs the in-process server, which production binaries leave out: import _ %q in the program or test that uses it", ErrInvalid, "github.com/jobgen/jobgen/runtime/embedded")
		}
		return open(u.Host + u.Path)
	}
	return nil, nil, fmt.Errorf("%w: Redis URL scheme %q: want redis, rediss, redis+sentinel, redis+cluster or embedded", ErrInvalid, u.Scheme)
}

func openSentinel(u *url.URL) (redis.UniversalClient, func() error, error) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if parts[0] == "" {
		return nil, nil, fmt.Errorf("%w: Sentinel URL %s has no master name: want redis+sentinel://host:port/mastername[/db]", ErrInvalid, redactURL(u.String()))
	}
	opt := &redis.FailoverOptions{MasterName: parts[0], SentinelAddrs: strings.Split(u.Host, ",")}
	if len(parts) > 1 {
		db, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: Sentinel URL %s: db %q is not a number", ErrInvalid, redactURL(u.String()), parts[1])
		}
		opt.DB = db
	}
	if u.User != nil {
		opt.Username = u.User.Username()
		opt.Password, _ = u.User.Password()
	}
	if u.Scheme == "rediss+sentinel" {
		opt.TLSConfig = tlsConfig(opt.SentinelAddrs[0])
	}
	c := redis.NewFailoverClient(opt)
	return c, c.Close, nil
}

// redactURL hides the password of a URL for error messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
