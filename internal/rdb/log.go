package rdb

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
)

// quietOnce routes go-redis's own log through slog once.
var quietOnce sync.Once

// QuietLog sends go-redis's internal log (its pool's "failed to dial
// after 5 attempts" lines, printed to stderr by default) to slog.Default
// at Debug level. The errors reach the caller anyway, in jobgen's own
// words: a Redis that is down is one line from Open, not four of
// go-redis's first. runtime calls it the first time Open or OpenClient
// makes a client; an application that passes NewEngine a client of its
// own keeps go-redis's logger as it set it.
func QuietLog() {
	quietOnce.Do(func() { redis.SetLogger(slogLogger{}) })
}

// slogLogger is go-redis's internal.Logging on slog.
type slogLogger struct{}

func (slogLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, fmt.Sprintf(format, v...), "source", "go-redis")
}
