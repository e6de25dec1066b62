package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Failure is one reserved job to move into the failed store.
type Failure struct {
	Ref
	// Name is the job's wire name, if known ("" for a payload that did
	// not decode).
	Name string
	// Err is why the job failed. It must not be nil.
	Err error
	// Attempts is the attempt count of the job's reservation.
	Attempts int
}

// FailedJob is one entry of the failed store.
type FailedJob struct {
	ID    string
	Queue string
	Name  string
	// Payload is the envelope as it was stored, without its ID and
	// perhaps its queue; decode it with DecodeEnvelope(Queue, ID, Payload).
	Payload  []byte
	Error    string
	Attempts int
	FailedAt time.Time
	// Errors are the errors of the job's last attempts, oldest first: at
	// most 10 that ended in an error and were retried, then the one that
	// failed (with Error, the reason it failed for good); for a job that
	// was cancelled, the attempts' before the cancel.
	Errors []AttemptError
	// Cancelled is true for a job that was cancelled (Inspector.Cancel)
	// rather than failed; Error is then ErrCancelled's message.
	Cancelled bool
	// token is the token of the reservation the job failed under.
	token string
}

func (s *FailedStore) keysFor(queue string) ([]string, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, err
	}
	qk := s.e.keys.Queue(queue)
	return []string{qk.Failed, qk.FailedPayloads, qk.FailedInfo, qk.FailedErrors}, nil
}

// Count returns how many failed jobs queue holds.
func (s *FailedStore) Count(ctx context.Context, queue string) (int64, error) {
	if n, ok, err := s.e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return pe.inspector().Failed().Count(ctx, p) }); ok {
		return n, err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return b.Count(ctx, queue)
	}
	k, err := s.keysFor(queue)
	if err != nil {
		return 0, err
	}
	return s.e.store.Count(ctx, k[0])
}

// List returns a page of the failed jobs of queue, newest first, from
// offset, at most limit of them.
func (s *FailedStore) List(ctx context.Context, queue string, offset, limit int) ([]FailedJob, error) {
	if jobs, ok, err := s.listPartitioned(ctx, queue, offset, limit); ok {
		return jobs, err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err == nil && (offset < 0 || limit < 1) {
			err = fmt.Errorf("%w: list failed jobs: offset (%d) must be >= 0 and limit (%d) >= 1", ErrInvalid, offset, limit)
		}
		if err != nil {
			return nil, err
		}
		return b.List(ctx, queue, offset, limit)
	}
	k, err := s.keysFor(queue)
	if err != nil {
		return nil, err
	}
	if offset < 0 || limit < 1 {
		return nil, fmt.Errorf("%w: list failed jobs: offset (%d) must be >= 0 and limit (%d) >= 1", ErrInvalid, offset, limit)
	}
	end := int64(offset) + int64(limit) - 1
	if end < int64(offset) { // overflow: everything from offset on
		end = -1
	}
	ids, at, err := s.e.store.NewestPage(ctx, k[0], int64(offset), end)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs of %q: %w", queue, err)
	}
	return s.load(ctx, queue, k, ids, at)
}

// Get returns one failed job; ok is false if queue has no failed job id.
func (s *FailedStore) Get(ctx context.Context, queue, id string) (job FailedJob, ok bool, err error) {
	if job, ok, partitioned, err := s.getPartitioned(ctx, queue, id); partitioned {
		return job, ok, err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return FailedJob{}, false, err
		}
		return b.Get(ctx, queue, id)
	}
	k, err := s.keysFor(queue)
	if err != nil {
		return FailedJob{}, false, err
	}
	score, found, err := s.e.store.ScoreOf(ctx, k[0], id)
	if err != nil {
		return FailedJob{}, false, fmt.Errorf("get failed job %s: %w", id, err)
	}
	if !found {
		return FailedJob{}, false, nil
	}
	jobs, err := s.load(ctx, queue, k, []string{id}, []float64{score})
	if err != nil || len(jobs) == 0 {
		return FailedJob{}, false, err
	}
	return jobs[0], true, nil
}

// load reads the failed jobs ids of queue, which failed at the times
// at (unix ms); k are the queue's failed-store keys (keysFor).
func (s *FailedStore) load(ctx context.Context, queue string, k, ids []string, at []float64) ([]FailedJob, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, err := s.e.store.HashFields(ctx, ids, k[1], k[2], k[3])
	if err != nil {
		return nil, fmt.Errorf("load failed jobs of %q: %w", queue, err)
	}
	payloads, infos, errs := got[0], got[1], got[2]
	out := make([]FailedJob, 0, len(ids))
	for i, id := range ids {
		j := FailedJob{ID: id, Queue: queue, FailedAt: time.UnixMilli(int64(at[i]))}
		if p := payloads[i]; p.Found {
			j.Payload = []byte(p.Value)
		}
		if raw := infos[i]; raw.Found {
			if info, err := jobrdb.ParseFailedInfo(raw.Value); err != nil {
				j.Error = fmt.Sprintf("(unreadable failure record: %v)", err)
			} else {
				j.Name, j.Error, j.Attempts, j.token, j.Cancelled = info.Name, info.Error, info.Attempts, info.Token, info.Cancelled
			}
		}
		if j.Name == "" {
			j.Name = nameOf(queue, id, j.Payload)
		}
		j.Errors = parseAttemptErrors(errs[i].Value)
		if !j.Cancelled && j.Attempts > 0 && (len(j.Errors) == 0 || j.Errors[len(j.Errors)-1].Attempt < j.Attempts) {
			// The attempt that failed, with why.
			j.Errors = append(j.Errors, AttemptError{Attempt: j.Attempts, At: j.FailedAt, Error: j.Error})
		}
		out = append(out, j)
	}
	return out, nil
}

// Retry pushes the given failed jobs back onto queue with their attempts
// reset, and returns the IDs pushed. Unknown IDs are skipped.
func (s *FailedStore) Retry(ctx context.Context, queue string, ids ...string) ([]string, error) {
	if done, ok, err := s.retryPartitioned(ctx, queue, ids); ok {
		return done, err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return s.retryBackend(ctx, b, queue, ids)
	}
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, err
	}
	if err := s.e.remember(ctx, queue); err != nil {
		return nil, err
	}
	done, err := s.e.store.Retry(ctx, jobrdb.Enqueue{Queue: s.e.keys.Queue(queue), Width: jobrdb.WidthPlain}, ids)
	if err != nil {
		return done, fmt.Errorf("retry failed jobs of %q: %w", queue, err)
	}
	return done, nil
}

// RetryAll pushes every failed job of queue back, oldest first, in calls
// of up to 1,000, and returns how many were pushed.
func (s *FailedStore) RetryAll(ctx context.Context, queue string) (int, error) {
	if n, ok, err := s.e.eachPartition(queue, func(pe *Engine, p string) (int64, error) {
		n, err := pe.inspector().Failed().RetryAll(ctx, p)
		return int64(n), err
	}); ok {
		return int(n), err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return s.retryAllBackend(ctx, b, queue)
	}
	k, err := s.keysFor(queue)
	if err != nil {
		return 0, err
	}
	// Only jobs that had failed when the call began: with a worker
	// running, retried jobs may fail again at once, and would be retried
	// again and again.
	_, newest, err := s.e.store.NewestPage(ctx, k[0], 0, 0)
	if err != nil || len(newest) == 0 {
		return 0, err
	}
	cutoff := strconv.FormatFloat(newest[0], 'f', -1, 64)
	total, skipped := 0, 0
	for {
		ids, err := s.e.store.UpTo(ctx, k[0], cutoff, int64(skipped), 1000)
		if err != nil {
			return total, fmt.Errorf("retry failed jobs of %q: %w", queue, err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		done, err := s.Retry(ctx, queue, ids...)
		total += len(done)
		if err != nil {
			return total, err
		}
		// IDs live on the queue again are left where they are.
		skipped += len(ids) - len(done)
	}
}

// Forget deletes failed jobs and returns how many there were.
func (s *FailedStore) Forget(ctx context.Context, queue string, ids ...string) (int64, error) {
	if n, ok, err := s.e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return pe.inspector().Failed().Forget(ctx, p, ids...) }); ok {
		return n, err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return b.Forget(ctx, queue, ids)
	}
	if err := validateQueueOrPartition(queue); err != nil {
		return 0, err
	}
	n, err := s.e.store.Forget(ctx, queue, ids)
	if err != nil {
		return n, fmt.Errorf("forget failed jobs of %q: %w", queue, err)
	}
	return n, nil
}

// Flush deletes every failed job of queue.
func (s *FailedStore) Flush(ctx context.Context, queue string) error {
	if _, ok, err := s.e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return 0, pe.inspector().Failed().Flush(ctx, p) }); ok {
		return err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return err
		}
		return b.Flush(ctx, queue)
	}
	k, err := s.keysFor(queue)
	if err != nil {
		return err
	}
	if err := s.e.store.Delete(ctx, k...); err != nil {
		return fmt.Errorf("flush failed jobs of %q: %w", queue, err)
	}
	return nil
}

// Prune deletes the failed jobs of queue that failed more than age ago
// (by the Redis clock), 1,000 per call, and returns how many went.
func (s *FailedStore) Prune(ctx context.Context, queue string, age time.Duration) (int64, error) {
	if n, ok, err := s.e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return pe.inspector().Failed().Prune(ctx, p, age) }); ok {
		return n, err
	}
	if b, err := s.moved(ctx, queue); b != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return b.Prune(ctx, queue, age)
	}
	if err := validateQueueOrPartition(queue); err != nil {
		return 0, err
	}
	n, err := s.e.store.Prune(ctx, queue, age.Milliseconds())
	if err != nil {
		return n, fmt.Errorf("prune failed jobs of %q: %w", queue, err)
	}
	return n, nil
}
