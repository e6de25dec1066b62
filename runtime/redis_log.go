package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
)

// redisLogOnce routes go-redis's own log through slog once, the first
// time Open or OpenClient makes a client.
var redisLogOnce sync.Once

// quietRedisLog sends go-redis's internal log (its pool's "failed to
// dial after 5 attempts" lines, printed to stderr by default) to
// slog.Default at Debug level. The errors reach the caller anyway, in
// jobgen's own words: a Redis that is down is one line from Open, not
// four of go-redis's first. Only the clients jobgen makes do this; an
// application that passes NewEngine a client of its own keeps go-redis's
// logger as it set it.
func quietRedisLog() {
	redisLogOnce.Do(func() { redis.SetLogger(redisLogger{}) })
}

// redisLogger is go-redis's internal.Logging on slog.
type redisLogger struct{}

func (redisLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, fmt.Sprintf(format, v...), "source", "go-redis")
}
