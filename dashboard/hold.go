package dashboard

import (
	"context"
	"time"
)

// queueHold reads what is left of queue's hold (runtime.HoldQueue), for
// the badge the overview and the queue page show; 0 if none is on.
func (h *handler) queueHold(ctx context.Context, queue string) (time.Duration, error) {
	holds, err := h.ins.QueueHolds(ctx, []string{queue})
	if err != nil {
		return 0, err
	}
	return holds[queue], nil
}
