package laravel

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// DebouncedJob is a Go type mapped to a debounced Laravel 13 job
// (#[DebounceFor]) whose class defines debounceId(): the Worker asks
// it for the ID, as Laravel's DebounceLock::getKey calls the method. A
// class with a public $debounceId property needs nothing: the Worker
// reads it from the serialized job.
type DebouncedJob interface {
	DebounceID() string
}

// superseded reports whether the job r is a debounced job (Laravel 13)
// that a newer dispatch has superseded, as CallQueuedHandler's
// commandShouldBeDebounced decides: its debounceOwner is set, and the
// debounce lock in the cache store is held by another owner. A missing
// lock lets the job run (Laravel's fail-open); so does a lock the bridge
// cannot name (a class with displayName(), or no cache prefix), with a
// warning. Such a job is deleted without running, as Laravel's
// deleteDebouncedJob does.
func (w *Worker) superseded(ctx context.Context, j *job) bool {
	if w.q.cfg.major() < 13 {
		return false
	}
	cmd, ok, _ := w.m.command(j.r.Payload)
	if !ok {
		return false
	}
	owner := commandString(cmd.Command, "debounceOwner")
	if owner == "" {
		return false
	}
	id := commandString(cmd.Command, "debounceId")
	if j.mp != nil && j.mp.decode != nil {
		if v, err := j.mp.decode(j.body); err == nil {
			if d, ok := v.(DebouncedJob); ok {
				id = d.DebounceID()
			}
		}
	}
	key, err := debounceKey(cmd.CommandName, j.r.Payload.DisplayName, id)
	if err == nil && w.q.cfg.CachePrefix == "" {
		err = errors.New("the connection has no cache_prefix, where Laravel keeps debounce locks")
	}
	if err != nil {
		w.log.Warn("cannot check the debounced job's lock; it runs", "queue", j.r.Queue, "job", j.r.Payload.DisplayName, "err", err)
		return false
	}
	current, err := w.q.rdb.Get(ctx, w.q.cfg.CachePrefix+key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return false
	case err != nil:
		w.log.Warn("read the debounced job's lock; it runs", "queue", j.r.Queue, "job", j.r.Payload.DisplayName, "err", err)
		return false
	case current == owner || current == serializedString(owner):
		return false
	}
	if w.settle(j.r, w.q.Delete(ctx, j.r)) {
		w.log.Info("debounced job superseded by a newer dispatch; deleted", "queue", j.r.Queue, "job", j.r.Payload.DisplayName, "uuid", j.r.Payload.UUID)
	}
	return true
}

// serializedString is s as Laravel's Redis cache store keeps a string
// value: serialize($s).
func serializedString(s string) string {
	return "s:" + strconv.Itoa(len(s)) + ":\"" + s + "\";"
}
