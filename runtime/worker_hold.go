package runtime

import (
	"context"
	"time"
)

// holdFor holds the queue of res, whose handler returned a HoldQueue
// request for d, and returns the delay its job goes back with: none, or
// d itself if the hold could not be written, so that the job still
// waits out the back-off the handler asked for.
func (w *Worker) holdFor(ctx context.Context, res Reservation, d time.Duration, cause error) time.Duration {
	queue := w.e.logicalQueue(res.Queue)
	until, err := w.e.holdQueue(ctx, queue, d)
	if err != nil {
		w.log.Warn("hold queue failed; the job goes back delayed by the hold instead", "queue", queue, "id", res.ID, "hold", d, "err", err)
		return d
	}
	w.log.Info("queue held by its handler", "queue", queue, "id", res.ID, "hold", d, "until", until, "cause", cause)
	return 0
}
