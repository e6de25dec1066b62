package laravel

import (
	"context"
	"errors"

	"github.com/jobgen/jobgen/internal/attempt"
)

// exceptionsKey is where Laravel's worker counts a job's exceptions for
// maxExceptions: the cache key job-exceptions:UUID, in the cache store
// (Config.CachePrefix). Without a cache prefix the count is the Go
// side's own, under the connection's prefix.
func (q *Queue) exceptionsKey(uuid string) string {
	if q.cfg.CachePrefix == "" {
		return q.cfg.Prefix + "jobgen:job-exceptions:" + uuid
	}
	return q.cfg.CachePrefix + "job-exceptions:" + uuid
}

// forgetExceptions deletes a job's exception count once it has reached
// maxExceptions and failed the job (reason), as Laravel's worker does
// (markJobAsFailedIfWillExceedMaxExceptions: cache->forget), rather than
// leaving it for its day.
func (w *Worker) forgetExceptions(ctx context.Context, p Payload, reason error) {
	if !errors.Is(reason, attempt.ErrMaxExceptions) {
		return
	}
	key := w.q.exceptionsKey(p.UUID)
	if err := w.q.rdb.Del(context.WithoutCancel(ctx), key).Err(); err != nil {
		w.log.Warn("forget the job's exception count", "job", p.DisplayName, "key", key, "err", err)
	}
}
