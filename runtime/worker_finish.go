package runtime

import (
	"context"
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
			StartedAt: o.began, Runtime: o.ev.Duration, Tags: o.env.Tags}
	}
	return f
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
