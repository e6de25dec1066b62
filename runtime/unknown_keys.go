package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// UnknownKeysWait is how long after its dispatch a job whose body holds
// a key its struct does not know is given back, its attempt unused, for
// a newer worker to run, before it fails with the *FieldError naming the
// key.
//
// A new field is a compatible change (docs/changing-jobs.md): the schema
// lock takes it without a new version, so during a rolling deploy a
// worker of the build before may meet a body that carries it. Running
// the handler without the field would drop what the dispatcher sent, and
// failing the job would lose it to a deploy; so the older worker gives
// it back for a worker that knows the field, as it does a job of a newer
// schema version. A body that no build of the job writes (a foreign
// producer's, say) still fails, once the deploy that could explain it
// would long be over.
const UnknownKeysWait = time.Hour

// unknownKeyOf returns the *FieldError of a key err reports unknown, if
// the job's dispatch is recent enough that a newer build may have
// written it.
func unknownKeyOf(err error, env *Envelope, now time.Time) (*FieldError, bool) {
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Problem != ProblemUnknown || env.DispatchedAt == 0 {
		return nil, false
	}
	return fe, now.Sub(time.UnixMilli(env.DispatchedAt)) < UnknownKeysWait
}

// giveBackUnknownKey puts back a job whose body holds a key its struct
// does not know, its attempt unused, after NewerVersionDelay, for a
// worker of a newer build to take. It logs the first of each job name
// and key, and counts as a give-back for a newer worker
// (WorkerStats.GivenBackNewer, queue:monitor).
func (w *Worker) giveBackUnknownKey(ctx context.Context, res Reservation, env *Envelope, ev Event, fe *FieldError) {
	key := fmt.Sprintf("%s key %s", env.Name, fe.Key)
	if _, logged := w.newer.seen.LoadOrStore(key, true); !logged {
		w.log.Warn("job body holds a key its struct does not know, as a newer build that added a field writes; giving such jobs back, unused, for a newer worker",
			"queue", res.Queue, "job", env.Name, "id", res.ID, "key", fe.Key, "for", UnknownKeysWait)
	}
	version := max(env.SchemaVersion, 1)
	w.givenBackNewer.Add(1)
	w.noteNewer(res.Queue, env.Name, version, version)
	ev.Attempt = res.Attempts - 1
	cause := fmt.Errorf("%w: %w; given back for a newer worker until %s after dispatch", ErrNewerVersion, fe, UnknownKeysWait)
	w.releaseWith(ctx, res, ev, ReleaseOpts{Delay: NewerVersionDelay, Deferral: true}, cause)
}
