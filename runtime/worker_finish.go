package runtime

import (
	"context"
	"strconv"
	"time"
)

// finishOf is what a job that succeeded leaves behind (finish.go): its
// result, and its record if its queue keeps finished jobs; nil when
// neither, for a plain ack.
func (w *Worker) finishOf(o outcome) *Finish {
	_, keeps := w.e.keepFinished(o.res.Queue)
	if o.result == nil && !keeps {
		return nil
	}
	f := &Finish{Ref: o.res.Ref, Result: o.result}
	if keeps {
		f.Record = &FinishedJob{Name: o.env.Name, Attempts: o.res.Attempts, Worker: w.cfg.Name,
			StartedAt: o.began, Runtime: o.ev.Duration, Tags: o.env.Tags, Wait: -1}
		if ready, ok := readyAt(o.env, o.res.Attempts); ok {
			f.Record.Wait = max(o.began.Sub(ready), 0)
		}
	}
	return f
}

// DueHeader is the envelope header that holds a delayed job's due time,
// unix ms: a push writes it for a job it delays (the dispatch middleware
// of the prometheus module writes the same).
const DueHeader = "jobgen-due"

// readyAt is when the job of env became ready for the attempt numbered
// attempt, when known: for a first attempt its due time (DueHeader) if
// it was delayed, else its dispatch time. A later attempt became ready
// when its release's delay (the backoff) ran out, which the worker that
// takes it does not know: it is not known.
func readyAt(env *Envelope, attempt int) (time.Time, bool) {
	if attempt != 1 {
		return time.Time{}, false
	}
	if v, ok := env.Headers[DueHeader]; ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.UnixMilli(ms), true
		}
	}
	return time.UnixMilli(env.DispatchedAt), env.DispatchedAt > 0
}

// wakeAwait pushes to the done list of a job that failed for good, if
// its type returns a result (RegisterResult), so that an Await of it
// returns the failure at once rather than at its next look. The failed
// store has the job already; a push that does not land only delays the
// Await by up to 300 ms.
func (w *Worker) wakeAwait(ctx context.Context, res Reservation, env *Envelope) {
	rt := w.r.lookup(env.Name)
	if rt == nil || !rt.result {
		return
	}
	done := w.e.keys.Done(res.Queue, res.ID)
	if err := w.e.store.RingDone(ctx, done, doneTTL); err != nil {
		w.log.Warn("waking the Await of a failed job failed; it sees the failure within 300 ms", "queue", res.Queue, "id", res.ID, "err", err)
	}
}
