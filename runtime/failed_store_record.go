package runtime

import (
	"context"
	"fmt"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Record adds env, a job that failed for good somewhere other than this
// engine's queues (the Laravel bridge's worker records Laravel jobs so),
// to the failed store of env.Queue, with cause and the attempts it
// made, trimming the store as Fail does, if it is bounded. Retry then pushes env onto
// env.Queue of this engine, for the worker that has a handler for
// env.Name. Recording an ID the store holds already changes nothing and
// returns false.
func (s *FailedStore) Record(ctx context.Context, env *Envelope, cause error, attempts int) (bool, error) {
	if err := validateQueueOrPartition(env.Queue); err != nil {
		return false, err
	}
	if env.ID == "" || env.Name == "" {
		return false, fmt.Errorf("%w: record failed job: the envelope needs an ID and a name", ErrInvalid)
	}
	if env.DispatchedAt == 0 {
		env.DispatchedAt = time.Now().UnixMilli()
	}
	payload, err := env.Encode()
	if err != nil {
		return false, err
	}
	msg := "unknown error"
	if cause != nil {
		msg = cause.Error()
	}
	info := jobrdb.FailedInfo{Name: env.Name, Error: msg, Attempts: attempts}
	maxCount, maxAge := s.e.failedBounds()
	added, trimmed, err := s.e.store.RecordFailed(ctx, env.Queue, env.ID, payload, info, maxCount, maxAge)
	if err != nil {
		return false, fmt.Errorf("record failed job %s: %w", env.ID, err)
	}
	s.e.logTrimmed(env.Queue, trimmed)
	s.e.moveFailedLogged(ctx, env.Queue)
	return added, nil
}
