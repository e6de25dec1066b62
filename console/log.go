package console

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// logger is where the commands log: Worker.Logger, or warnings and
// errors as text on Stderr.
func (c *Command) logger() *slog.Logger {
	if c.Worker.Logger != nil {
		return c.Worker.Logger
	}
	return slog.New(slog.NewTextHandler(c.stderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// routeRedisLog sends go-redis's own log lines, such as one per failed
// dial of its pool, to l at Debug level, so that an error is reported
// once, by the command, rather than also in go-redis's words on Stderr.
// go-redis has one logger per process (redis.SetLogger), so this holds
// for the whole process.
func routeRedisLog(l *slog.Logger) {
	redis.SetLogger(redisLog{l})
}

// redisLog is a go-redis logger that writes to a slog.Logger at Debug
// level.
type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !r.l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	msg := strings.TrimPrefix(strings.TrimSpace(fmt.Sprintf(format, v...)), "redis: ")
	r.l.DebugContext(ctx, msg, "from", "go-redis")
}
