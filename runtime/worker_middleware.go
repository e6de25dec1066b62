package runtime

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// runMiddleware runs env's job through the worker's middleware, with the
// worker's engine on the context for the middleware that needs Redis.
func (w *Worker) runMiddleware(ctx context.Context, env *Envelope) error {
	if _, ok := ctx.(*jobContext); !ok { // a jobContext carries the engine
		ctx = context.WithValue(ctx, engineKey{}, w.e)
	}
	return through(ctx, w.cfg.Middleware, func(ctx context.Context) error { return w.r.Run(ctx, env) })
}

// warnReleasingOnOneTry warns of the jobs that middleware releases but
// that have one try and no retry-until: a release uses the attempt, so
// every release fails them, as in Laravel. It looks only at the jobs
// whose queue the worker serves: another worker's are not its to warn of.
// NewWorker runs it.
func (w *Worker) warnReleasingOnOneTry() {
	own := releasing(w.cfg.Middleware)
	w.r.mu.RLock()
	defer w.r.mu.RUnlock()
	for name, rt := range w.r.routes {
		ms := append(slices.Clone(own), rt.releasing...)
		tries := rt.opts.Tries
		if tries == 0 {
			tries = w.cfg.Tries
		}
		queue := cmp.Or(rt.opts.Queue, DefaultQueue)
		if len(ms) == 0 || tries != 1 || rt.opts.RetryUntil > 0 || !slices.Contains(w.cfg.Queues, queue) {
			continue
		}
		w.log.Warn("job has middleware that releases it, but one try: each release uses the attempt, so the first release fails it; give it tries= or retry_until=",
			"job", name, "middleware", strings.Join(ms, ", "))
	}
}
