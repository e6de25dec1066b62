package rdb

import (
	"context"
	"fmt"

	"github.com/jobgen/jobgen/runtime/lua"
)

// A queue's sizes, read in one script call (sizes.lua), and its clear
// (clear.lua).

var (
	scriptSizes = lua.Get("sizes")
	scriptClear = lua.Get("clear")
)

// Sizes counts the jobs of one queue by state, and says whether it is
// paused. Grouped are the ready jobs waiting in fair groups, counted in
// Ready too.
type Sizes struct {
	Ready, Delayed, Reserved, Failed int64
	Paused                           bool
	Grouped                          int64
}

func (s *Store) sizesCall(queue string) Call {
	qk := s.keys.Queue(queue)
	return Call{Script: scriptSizes, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.Failed, qk.Paused, qk.GroupWait}}
}

func parseSizes(cmd Reply) (Sizes, error) {
	v, err := cmd.Int64Slice()
	if err == nil && len(v) != 6 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return Sizes{}, err
	}
	return Sizes{Ready: v[0], Delayed: v[1], Reserved: v[2], Failed: v[3], Paused: v[4] == 1, Grouped: v[5]}, nil
}

// Sizes reads the sizes of queue, one snapshot. It only reads, so it
// works when Redis is past maxmemory.
func (s *Store) Sizes(ctx context.Context, queue string) (Sizes, error) {
	return parseSizes(s.sizesCall(queue).Run(ctx, s.c))
}

// SizesOf reads the sizes of each queue of queues, in one pipeline. On
// an error, at is the index of the queue it is of.
func (s *Store) SizesOf(ctx context.Context, queues []string) (sizes []Sizes, at int, err error) {
	calls := make([]Call, len(queues))
	for i, q := range queues {
		calls[i] = s.sizesCall(q)
	}
	cmds, err := s.Run(ctx, calls)
	if err != nil {
		return nil, -1, err
	}
	sizes = make([]Sizes, len(cmds))
	for i, cmd := range cmds {
		if sizes[i], err = parseSizes(cmd); err != nil {
			return nil, i, err
		}
	}
	return sizes, 0, nil
}

// Clear deletes every ready, delayed and reserved job of queue and
// returns how many there were.
func (s *Store) Clear(ctx context.Context, queue string) (int64, error) {
	qk := s.keys.Queue(queue)
	return Call{Script: scriptClear, Keys: append([]string{qk.Ready, qk.Delayed, qk.Reserved, qk.Payloads, qk.State, qk.Notify, qk.Errors, qk.Progress}, qk.Groups()...)}.Run(ctx, s.c).Int64()
}
