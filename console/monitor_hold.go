package console

import (
	"context"
	"fmt"
	"time"
)

// monitorHolds prints a line for each of qs that a handler's
// runtime.HoldQueue holds now, with what is left of the hold. A hold is
// no alert by itself: the queue's wait (--max-wait) says when it keeps
// jobs waiting too long.
func (s *session) monitorHolds(ctx context.Context, qs []string) error {
	holds, err := s.ins.QueueHolds(ctx, qs)
	if err != nil {
		return err
	}
	for _, q := range qs {
		if d, ok := holds[q]; ok {
			fmt.Fprintf(s.out, "Queue %s: held for %s more (runtime.HoldQueue): no worker takes its jobs until then.\n", q, d.Round(time.Second))
		}
	}
	return nil
}
