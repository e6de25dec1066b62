package rdb

import (
	"context"

	"github.com/jobgen/jobgen/runtime/lua"
)

// The progress hash of a queue: how far each running job has got.

var scriptProgress = lua.Get("progress")

// Progress records the progress of job id of queue, reserved under
// token: percent and note. ok is false if the job is no longer reserved
// under token, and nothing was written.
func (s *Store) Progress(ctx context.Context, queue, id, token string, percent int, note string) (ok bool, err error) {
	qk := s.keys.Queue(queue)
	n, err := Call{Script: scriptProgress, Keys: []string{qk.State, qk.Progress}, Args: []any{id, token, percent, note}}.Run(ctx, s.c).Int64()
	return n != 0, err
}
