package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// records keeps the log records a worker writes.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// TestJobLogTellsEachStateChangeOnce: one line per change of a job's
// state, with its id, name, queue, attempt and outcome; a failure is told
// once, at Error, and a healthy job only at Debug.
func TestJobLogTellsEachStateChangeOnce(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			if j.N == 2 {
				return errors.New("boom")
			}
			return nil
		})
		ids := b.dispatch(t, job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{Tries: 2}))
		log := &records{}
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 1, Logger: slog.New(log)})

		type line struct {
			level            slog.Level
			msg, id, outcome string
			attempt          int64
		}
		var got []line
		for _, r := range log.recs {
			l := line{level: r.Level, msg: r.Message}
			r.Attrs(func(a slog.Attr) bool {
				switch a.Key {
				case "id":
					l.id = a.Value.String()
				case "outcome":
					l.outcome = a.Value.String()
				case "attempt":
					l.attempt = a.Value.Int64()
				}
				return true
			})
			if l.id != "" {
				got = append(got, l)
			}
		}
		require.ElementsMatch(t, []line{
			{slog.LevelDebug, "job started", ids[0], "", 1},
			{slog.LevelDebug, "job done", ids[0], "ok", 1},
			{slog.LevelDebug, "job started", ids[1], "", 1},
			{slog.LevelWarn, "job raised an error; will retry", ids[1], "error", 1},
			{slog.LevelDebug, "job started", ids[1], "", 2},
			{slog.LevelError, "job failed", ids[1], "failed", 2},
		}, got)
	})
}
