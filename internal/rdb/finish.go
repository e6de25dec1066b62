package rdb

import "github.com/jobgen/jobgen/runtime/lua"

// Finishing jobs: the ack of jobs that leave a result or a record of
// finished jobs behind, in the same script call (finish.lua).

var scriptFinish = lua.Get("finish")

// Finish is what one finish call keeps, all in ms.
type Finish struct {
	// Retention is how long a result is kept; DoneTTL how long its done
	// list lives.
	Retention, DoneTTL int64
	// KeepMax and KeepAge bound the queue's record of finished jobs
	// (0: no record).
	KeepMax, KeepAge int64
	// Slot is the runtimes hash's slot, and RuntimesTTL its lifetime.
	Slot, RuntimesTTL int64
}

// FinishJobs is the jobs of one queue that one finish call acks.
type FinishJobs struct {
	Queue   string
	Grouped bool // as in Jobs

	slot int64
	args []any // the head (5), then id, token, result, info, field a job
	with int   // jobs with a result
}

// finishHead is the number of arguments of a finish call before its
// jobs.
const finishHead = 5

// NewFinishJobs returns the jobs of queue for one finish call of f, with
// room for n.
func NewFinishJobs(queue string, n int, grouped bool, f Finish) FinishJobs {
	args := make([]any, 0, finishHead+5*n)
	args = append(args, f.Retention, f.DoneTTL, f.KeepMax, f.KeepAge, f.RuntimesTTL)
	return FinishJobs{Queue: queue, Grouped: grouped, slot: f.Slot, args: args}
}

// Add adds job id, reserved under token, with its encoded result (nil
// for none), its record of finished jobs (info, "" for none) and the
// runtimes field that counts it.
func (f *FinishJobs) Add(id, token string, result []byte, info, field string) {
	if len(result) > 0 {
		f.with++
	}
	f.args = append(f.args, id, token, string(result), info, field)
}

// Len is the number of jobs.
func (f *FinishJobs) Len() int { return (len(f.args) - finishHead) / 5 }

// finishCall is the finish call of f: its queue's keys, then two for
// each job with a result, then the group keys.
func (s *Store) finishCall(f *FinishJobs) Call {
	qk := s.keys.Queue(f.Queue)
	keys := make([]string, 0, 8+2*f.with+7)
	keys = append(keys, qk.Reserved, qk.State, qk.Payloads, qk.Errors, qk.Progress,
		s.keys.Finished(f.Queue), s.keys.FinishedInfo(f.Queue), s.keys.Runtimes(f.Queue, f.slot))
	for i := finishHead; i < len(f.args); i += 5 {
		if r, _ := f.args[i+2].(string); r != "" {
			id := f.args[i].(string)
			keys = append(keys, s.keys.Result(f.Queue, id), s.keys.Done(f.Queue, id))
		}
	}
	if f.Grouped {
		keys = append(append(keys, qk.Groups()...), qk.Notify)
	}
	return Call{Script: scriptFinish, Keys: keys, Args: f.args}
}
