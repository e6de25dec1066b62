package laravel

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jobgen/jobgen/runtime"
)

// RequeueJobName is the wire name under which failed Laravel jobs wait in
// jobgen's failed store. Retrying one (queue:retry) pushes it onto
// jobgen's queue, where a worker whose router has RegisterRequeue puts
// the Laravel payload back on its Laravel queue; Retry does the same
// without the hop.
const RequeueJobName = "jobgen.laravel.Requeue"

// Requeue is the body of a failed Laravel job in jobgen's failed store:
// the payload as it was pushed, and the Laravel queue it came from.
type Requeue struct {
	// Queue is the Laravel queue the job was popped from.
	Queue string `msgpack:"q"`
	// Payload is Laravel's JSON, as pushed (before the pop that failed).
	Payload []byte `msgpack:"p"`
	// DisplayName is the payload's displayName, for listings.
	DisplayName string `msgpack:"d,omitempty"`
}

// requeueEnvelope wraps a popped job for the failed store.
func requeueEnvelope(failedQueue string, r *Reserved, name string) (*runtime.Envelope, error) {
	body, err := runtime.Encode(Requeue{Queue: r.Queue, Payload: r.Raw, DisplayName: name})
	if err != nil {
		return nil, err
	}
	return &runtime.Envelope{ID: failedID(r), Name: RequeueJobName, Queue: failedQueue, Body: body, Tags: []string{"laravel", name}}, nil
}

// RegisterRequeue routes RequeueJobName on r: a retried failed Laravel
// job goes back onto its Laravel queue of q, its attempts reset, as
// Laravel's queue:retry does.
func RegisterRequeue(r *runtime.Router, q *Queue) {
	runtime.Register(r, RequeueJobName, func(ctx context.Context, job Requeue) error {
		return job.push(ctx, q)
	})
}

func (j Requeue) push(ctx context.Context, q *Queue) error {
	payload, err := resetAttempts(j.Payload)
	if err != nil {
		return runtime.FailRequest(err)
	}
	return q.Push(ctx, j.Queue, payload)
}

// resetAttempts sets a payload's attempts to 0. Its retryUntil stays:
// Laravel's queue:retry asks the job object's retryUntil() for a new one,
// which only PHP can.
func resetAttempts(payload []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, fmt.Errorf("laravel: failed payload is not a JSON object: %w", err)
	}
	m["attempts"] = json.RawMessage("0")
	return json.Marshal(m)
}

// Retry puts failed Laravel jobs of store (kept under failedQueue,
// WorkerConfig.FailedQueue) back on their Laravel queues of q with their
// attempts reset, and forgets them; it returns the IDs done. IDs that
// are not failed Laravel jobs are skipped.
func Retry(ctx context.Context, store *runtime.FailedStore, q *Queue, failedQueue string, ids ...string) ([]string, error) {
	var done []string
	for _, id := range ids {
		fj, ok, err := store.Get(ctx, failedQueue, id)
		if err != nil {
			return done, err
		}
		if !ok {
			continue
		}
		env, err := runtime.DecodeEnvelope(fj.Queue, fj.ID, fj.Payload)
		if err != nil || env.Name != RequeueJobName {
			continue
		}
		job, err := runtime.Decode[Requeue](env.Body)
		if err != nil {
			return done, fmt.Errorf("laravel: failed job %s: %w", id, err)
		}
		if err := job.push(ctx, q); err != nil {
			return done, err
		}
		if _, err := store.Forget(ctx, failedQueue, id); err != nil {
			return done, err
		}
		done = append(done, id)
	}
	return done, nil
}
