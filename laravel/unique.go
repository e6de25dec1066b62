package laravel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Unique jobs across the bridge. A PHP class that implements
// ShouldBeUnique takes a lock in the app's cache store as it is
// dispatched (Laravel's UniqueLock: the key "laravel_unique_job:" plus
// the class plus its uniqueId, SET NX for uniqueFor seconds), and
// CallQueuedHandler releases it (DEL) when the job has succeeded or
// failed for good. A Go type mapped to such a class is unique when it
// implements runtime.UniqueJob and its JobOptions set UniqueFor: the
// Dispatcher takes the lock as Laravel's dispatch does, and the Worker
// releases it as Laravel's handler does, so either side's worker frees
// the other side's lock. Both need Config.CachePrefix (cache_prefix=),
// the Redis cache store's prefix.

// uniqueLockKey is the cache key of the unique lock of job, of class and
// with the payload's displayName, if job is unique, and "" if it is not.
// The key's form is the app's Laravel version's (uniqueKey).
func (q *Queue) uniqueLockKey(class, displayName string, job any) (key string, ttl time.Duration, err error) {
	u, ok := job.(runtime.UniqueJob)
	if !ok {
		return "", 0, nil
	}
	j, ok := job.(runtime.Job)
	if !ok || j.JobOptions().UniqueFor <= 0 {
		return "", 0, nil
	}
	if q.cfg.CachePrefix == "" {
		return "", 0, fmt.Errorf("%w: %s is unique, and the connection has no cache_prefix: Laravel keeps unique locks in its cache store (the Redis store's prefix, such as laravel_database_laravel_cache:)", runtime.ErrInvalid, class)
	}
	key, err = uniqueKey(q.cfg.major(), class, displayName, u.UniqueID())
	if err != nil {
		return "", 0, err
	}
	return q.cfg.CachePrefix + key, j.JobOptions().UniqueFor, nil
}

// lockUnique takes job's unique lock for a dispatch, as Laravel's
// UniqueLock::acquire does, and returns a function that gives it back
// (for a push that failed); a *runtime.DuplicateError if it is held.
func (q *Queue) lockUnique(ctx context.Context, class, name string, job any) (undo func(), err error) {
	key, ttl, err := q.uniqueLockKey(class, class, job)
	if err != nil || key == "" {
		return func() {}, err
	}
	owner := make([]byte, 8)
	_, _ = rand.Read(owner)
	token := hex.EncodeToString(owner)
	// Laravel's RedisLock: SET EX NX, in whole seconds.
	ok, err := q.rdb.SetNX(ctx, key, token, time.Duration(math.Ceil(ttl.Seconds()))*time.Second).Result()
	switch {
	case err != nil:
		return nil, fmt.Errorf("take unique lock %s: %w", key, err)
	case !ok:
		return nil, &runtime.DuplicateError{Name: name, Key: key}
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		if v, err := q.rdb.Get(ctx, key).Result(); err == nil && v == token {
			_ = q.rdb.Del(ctx, key).Err()
		}
	}, nil
}

// releaseUnique frees the unique lock of the job a worker ran, as
// CallQueuedHandler's ensureUniqueJobLockIsReleased does (forceRelease:
// whoever holds it).
func (w *Worker) releaseUnique(ctx context.Context, j *job) {
	if j.mp == nil || len(j.body) == 0 || j.mp.decode == nil {
		return
	}
	v, err := j.mp.decode(j.body)
	if err != nil {
		return
	}
	key, _, err := w.q.uniqueLockKey(j.mp.class, j.r.Payload.DisplayName, v)
	if err != nil {
		w.log.Warn("cannot release the job's unique lock", "queue", j.r.Queue, "job", j.r.Payload.DisplayName, "err", err)
		return
	}
	if key == "" {
		return
	}
	if w.q.cfg.major() >= 13 {
		// Laravel 13 records the lock's owner in the job
		// (uniqueLockOwner) and releases only its own lock.
		if cmd, ok, _ := w.m.command(j.r.Payload); ok {
			if owner := commandString(cmd.Command, "uniqueLockOwner"); owner != "" {
				if held, err := w.q.rdb.Get(ctx, key).Result(); err == nil && held != owner {
					return
				}
			}
		}
	}
	if err := w.q.rdb.Del(context.WithoutCancel(ctx), key).Err(); err != nil {
		w.log.Warn("release the job's unique lock", "queue", j.r.Queue, "job", j.r.Payload.DisplayName, "key", key, "err", err)
	}
}
