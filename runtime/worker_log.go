package runtime

import (
	"context"
	"errors"
	"log/slog"
)

// The worker logs one line per change of a job's state to its Logger
// (WorkerConfig.Logger), with the attributes of the job's trace span:
// id, job (its name), queue, attempt, and where they apply duration (how
// long the handler ran), delay, outcome and err. The levels are chosen
// so that a healthy worker is quiet at Info:
//
//	Debug  job started; job done (outcome ok); job released by its
//	       handler or middleware (released), or given back at a stop,
//	       or for a worker that knows its newer schema version
//	Warn   job will retry after an error (error) or a timeout (timed_out)
//	Error  job failed for good (failed)
//	Warn   running job cancelled by an operator (cancelled)
//
// The worker's own life (stopping, pausing, a restart) is logged at
// Info, and trouble with Redis or leases at Warn and Error.
const (
	OutcomeOK       = "ok"        // the handler succeeded, or deleted its job
	OutcomeError    = "error"     // the handler returned an error or panicked; the job will retry
	OutcomeReleased = "released"  // the handler or its middleware released the job
	OutcomeTimedOut = "timed_out" // the attempt ran past its timeout; the job will retry
	OutcomeFailed   = "failed"    // the job failed for good
	// OutcomeCancelled: an operator cancelled the running job
	// (Inspector.Cancel); what its handler returned was discarded.
	OutcomeCancelled = "cancelled"
)

// logJob logs ev, if it changes a job's state, as described above.
func (w *Worker) logJob(ev Event) {
	var level slog.Level
	var msg, outcome string
	switch ev.Kind {
	case JobProcessing:
		level, msg = slog.LevelDebug, "job started"
	case JobProcessed:
		level, msg, outcome = slog.LevelDebug, "job done", OutcomeOK
	case JobReleased:
		switch {
		case ev.Err == nil || errors.Is(ev.Err, ErrWorkerStopping):
			level, msg, outcome = slog.LevelDebug, "job released", OutcomeReleased
		case errors.Is(ev.Err, ErrNewerVersion): // logged at Warn once per name and version (schema_version.go)
			level, msg, outcome = slog.LevelDebug, "job given back for a newer worker", OutcomeReleased
		case errors.Is(ev.Err, ErrTimeout):
			level, msg, outcome = slog.LevelWarn, "job timed out; will retry", OutcomeTimedOut
		default:
			level, msg, outcome = slog.LevelWarn, "job raised an error; will retry", OutcomeError
		}
	case JobFailed:
		level, msg, outcome = slog.LevelError, "job failed", OutcomeFailed
	case JobCancelled:
		level, msg, outcome = slog.LevelWarn, "job cancelled while running; its result is discarded", OutcomeCancelled
	default:
		return
	}
	ctx := context.Background()
	if !w.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("id", ev.ID), slog.String("job", ev.Name), slog.String("queue", ev.Queue), slog.Int("attempt", ev.Attempt))
	if ev.Duration > 0 {
		attrs = append(attrs, slog.Duration("duration", ev.Duration))
	}
	if ev.Kind == JobReleased {
		attrs = append(attrs, slog.Duration("delay", ev.Delay))
	}
	if outcome != "" {
		attrs = append(attrs, slog.String("outcome", outcome))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.Any("err", ev.Err))
	}
	w.log.LogAttrs(ctx, level, msg, attrs...)
}
