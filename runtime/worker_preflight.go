package runtime

import (
	"context"
)

// checkEviction refuses to run on a Redis that may evict jobgen's keys,
// unless the engine's config accepts the risk (EngineConfig.AllowEviction),
// which it then logs once; a Redis that refuses CONFIG is said so and
// not checked.
func (w *Worker) checkEviction(ctx context.Context) error {
	return checkEviction(ctx, w.e.rdb, w.e.cfg.AllowEviction, w.log)
}
