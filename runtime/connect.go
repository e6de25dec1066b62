package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
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
	if err := jobrdb.CheckTLS(ctx, rdb); err != nil {
		_ = closer()
		return nil, fmt.Errorf("%w (URL %s)", err, jobrdb.RedactURL(rawURL))
	}
	e, err := NewEngine(ctx, rdb, cfg)
	if err != nil {
		_ = closer()
		return nil, fmt.Errorf("%w (URL %s)", jobrdb.StartError(err), jobrdb.RedactURL(rawURL))
	}
	e.closer = closer
	return e, nil
}

// OpenClient returns a go-redis client for rawURL, in the forms Open
// takes, and a function that closes it.
func OpenClient(rawURL string) (redis.UniversalClient, func() error, error) {
	return openClient(rawURL)
}

// openClient makes the client of Open and OpenClient (internal/rdb's
// connect.go): an empty URL is ErrNoURL and a bad one wraps ErrInvalid.
func openClient(rawURL string) (redis.UniversalClient, func() error, error) {
	jobrdb.QuietLog()
	if strings.TrimSpace(rawURL) == "" {
		return nil, nil, fmt.Errorf("%w: set %s (or pass a URL), for example redis://127.0.0.1:6379/0, or embedded:// for an in-process server", ErrNoURL, URLEnv)
	}
	c, closer, err := jobrdb.OpenClient(rawURL)
	var bad *jobrdb.BadURLError
	if errors.As(err, &bad) {
		return nil, nil, fmt.Errorf("%w: %s", ErrInvalid, bad.Reason)
	}
	return c, closer, err
}
