package runtime

import (
	"context"
	"fmt"

	"github.com/jobgen/jobgen/internal/send"
)

// QueueState is a queue's sizes and whether it is paused.
type QueueState struct {
	Sizes
	Paused bool
}

// States reads the sizes and paused flag of every queue of queues, in
// one pipeline of one script call per queue (per partition of a
// partitioned queue): one round trip, whatever the number of queues,
// and no scan of keys. It is meant for a metrics collector that reads
// every queue at each scrape.
func (i *Inspector) States(ctx context.Context, queues []string) (map[string]QueueState, error) {
	e := i.e
	type part struct{ queue, name string }
	var parts []part
	var calls []call
	for _, q := range queues {
		if err := validateQueueOrPartition(q); err != nil {
			return nil, err
		}
		names := []string{q}
		if ps := e.partitionsOf(q); ps != nil {
			names = ps.names
		}
		for _, name := range names {
			qk := e.keys.Queue(name)
			parts = append(parts, part{q, name})
			calls = append(calls, call{Script: scriptSizes, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.Failed, qk.Paused}, Args: nil})
		}
	}
	out := make(map[string]QueueState, len(queues))
	if len(calls) == 0 {
		return out, nil
	}
	cmds, err := send.All(ctx, e.rdb, calls)
	if err != nil {
		return nil, fmt.Errorf("queue states: %w", err)
	}
	for i, cmd := range cmds {
		v, err := cmd.Int64Slice()
		if err == nil && len(v) != 5 {
			err = fmt.Errorf("unexpected reply %v", v)
		}
		if err != nil {
			return nil, fmt.Errorf("queue states of %q: %w", parts[i].name, err)
		}
		s := out[parts[i].queue]
		s.Ready += v[0]
		s.Delayed += v[1]
		s.Reserved += v[2]
		s.Failed += v[3]
		s.Paused = s.Paused || v[4] == 1
		out[parts[i].queue] = s
	}
	return out, nil
}
