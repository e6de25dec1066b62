package rdb

import (
	"context"
	"fmt"

	"github.com/jobgen/jobgen/runtime/lua"
)

// Cancelling a job: cancel.lua moves a job, waiting, delayed or
// reserved, into the failed store if it is still at the attempt named.

var scriptCancel = lua.Get("cancel")

// Cancel is one cancel call.
type Cancel struct {
	Queue, ID string
	// Seen is the attempt count the cancel names.
	Seen int
	// Token marks the cancel's entry in the failed store and the hooks
	// set; Info is the failed store's record of it.
	Token string
	Info  FailedInfo
	// MaxCount and MaxAge (ms) trim the failed store; 0 for no bound.
	MaxCount, MaxAge int64
}

// What a cancel found (CancelResult.Found).
const (
	CancelledReady    = 1
	CancelledReserved = 2
	CancelledDelayed  = 3
	CancelFailed      = -1 // in the failed store already
	CancelStale       = -2 // at another attempt than Seen
	CancelNoJob       = 0  // no such job
)

// CancelResult is what a cancel found (one of the Cancel constants), and
// the job's attempt count.
type CancelResult struct {
	Found    int
	Attempts int
	// Trimmed is how many old entries trimming dropped from the failed
	// store.
	Trimmed int64
}

// Cancel runs c.
func (s *Store) Cancel(ctx context.Context, c Cancel) (CancelResult, error) {
	info, err := c.Info.Encode()
	if err != nil {
		return CancelResult{}, err
	}
	qk := s.keys.Queue(c.Queue)
	keys := append([]string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Payloads, qk.Failed, qk.FailedPayloads, qk.FailedInfo, qk.Hooks, qk.Errors, qk.FailedErrors, qk.Progress},
		append(qk.Groups(), qk.Notify, qk.FailedTrimmed)...) // a running grouped job frees its group's slot
	args := []any{c.MaxCount, c.MaxAge, c.ID, c.Seen, info, c.Token}
	v, err := Call{Script: scriptCancel, Keys: keys, Args: args}.Run(ctx, s.c).Int64Slice()
	if err != nil {
		return CancelResult{}, err
	}
	if len(v) != 2 && len(v) != 3 {
		return CancelResult{}, fmt.Errorf("unexpected reply %v", v)
	}
	r := CancelResult{Found: int(v[0]), Attempts: int(v[1])}
	if len(v) == 3 {
		r.Trimmed = v[2]
	}
	if r.Found < CancelStale || r.Found > CancelledDelayed {
		r.Found = CancelNoJob
	}
	return r, nil
}
