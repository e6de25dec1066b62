package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// outage is a go-redis hook that fails every call while down is set, as
// a Redis that cannot be reached does, and counts the calls it failed.
type outage struct {
	down   atomic.Bool
	failed atomic.Int64
}

var errUnreachable = errors.New("dial tcp 127.0.0.1:6399: connect: connection refused")

func (o *outage) DialHook(next redis.DialHook) redis.DialHook { return next }

func (o *outage) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if o.down.Load() {
			o.failed.Add(1)
			cmd.SetErr(errUnreachable)
			return errUnreachable
		}
		return next(ctx, cmd)
	}
}

func (o *outage) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if o.down.Load() {
			o.failed.Add(1)
			for _, c := range cmds {
				c.SetErr(errUnreachable)
			}
			return errUnreachable
		}
		return next(ctx, cmds)
	}
}

// A Redis outage is one ERROR line as it starts, however many retries it
// takes, and one line when Redis works again, with how long it was out;
// it used to be an ERROR a second and nothing at the end.
func TestWorkerLogsAnOutageOnceAndItsEnd(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(context.Context, testJob) error { return nil })
		o := &outage{}
		b.rdb.AddHook(o)
		var logs syncBuffer
		_, stop := b.start(t, runtime.WorkerConfig{Sleep: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		defer stop()
		b.dispatch(t, job(1, runtime.JobOptions{}))
		eventually(t, func() bool { return len(b.log.of(runtime.JobProcessed)) == 1 }, "the job before the outage runs")

		o.down.Store(true)
		eventually(t, func() bool { return o.failed.Load() >= 30 }, "the worker retries through the outage")
		o.down.Store(false)
		eventually(t, func() bool { return strings.Contains(logs.String(), "Redis works again") }, "the end of the outage is logged")

		var errs, warns, back []string
		for _, l := range strings.Split(logs.String(), "\n") {
			switch {
			case strings.Contains(l, "level=ERROR"):
				errs = append(errs, l)
			case strings.Contains(l, "level=WARN"):
				warns = append(warns, l)
			case strings.Contains(l, "Redis works again"):
				back = append(back, l)
			}
		}
		require.Len(t, errs, 1, "one ERROR for the outage, not one per retry:\n%s", logs.String())
		require.Contains(t, errs[0], "connection refused")
		require.LessOrEqual(t, len(warns), 1, "the move of due jobs says its failure once at most:\n%s", logs.String())
		require.Len(t, back, 1)
		require.Regexp(t, `after=\d`, back[0])
		require.Regexp(t, `failures=\d+`, back[0])

		b.dispatch(t, job(2, runtime.JobOptions{}))
		eventually(t, func() bool { return len(b.log.of(runtime.JobProcessed)) == 2 }, "jobs run again after the outage")
	})
}
