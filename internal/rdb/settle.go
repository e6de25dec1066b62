package rdb

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/send"
	"github.com/jobgen/jobgen/runtime/lua"
)

// The settles of reserved jobs (ack, release, fail, finish, extend): script
// calls, with the doorbells of the queues whose workers wait for a free
// slot rung in the same round trip.

// RunRinging is Run, with the doorbells bells rung in the same pipeline
// after the calls (and again after any call sent again by its source).
// A doorbell holds at most one element.
func (s *Store) RunRinging(ctx context.Context, calls []Call, bells []string) ([]Reply, error) {
	if len(bells) == 0 {
		return send.All(ctx, s.c, calls)
	}
	ring := func(p redis.Pipeliner) {
		for _, k := range bells {
			p.RPush(ctx, k, "1")
			p.LTrim(ctx, k, 0, 0)
		}
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		send.Pipe(ctx, p, calls, cmds)
		ring(p)
		return nil
	})
	send.Again(ctx, s.c, calls, cmds, func(p redis.Pipeliner, _ []int) { ring(p) })
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return cmds, err
		}
	}
	return cmds, nil
}

// HasEntries reports, for each i, whether the hash keys[i] has the field
// fields[i], read in one pipeline.
func (s *Store) HasEntries(ctx context.Context, keys, fields []string) ([]bool, error) {
	cmds := make([]*redis.BoolCmd, len(keys))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HExists(ctx, k, fields[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	has := make([]bool, len(cmds))
	for i, c := range cmds {
		has[i] = c.Val()
	}
	return has, nil
}

var (
	scriptAck       = lua.Get("ack")
	scriptRelease   = lua.Get("release")
	scriptExtend    = lua.Get("extend")
	scriptUnreserve = lua.Get("unreserve")
	scriptStart     = lua.Get("start")
	scriptFail      = lua.Get("fail")
)

// Jobs is the jobs of one queue that one settle call names, each by its
// ID and the token of its reservation.
type Jobs struct {
	Queue string
	// Grouped passes the queue's group keys: the queue may hold jobs of
	// a group, whose slots a settle frees.
	Grouped bool
	// Progressed passes the progress hash to an ack, which deletes the
	// entries of the jobs it acks: a job of the call reported progress.
	Progressed bool

	pairs []any // id, token, ...
}

// NewJobs returns the jobs of queue for one call, with room for n.
func NewJobs(queue string, n int, grouped bool) Jobs {
	return Jobs{Queue: queue, Grouped: grouped, pairs: make([]any, 0, 2*n)}
}

// Add adds job id, reserved under token.
func (j *Jobs) Add(id, token string) { j.pairs = append(j.pairs, id, token) }

// Len is the number of jobs.
func (j *Jobs) Len() int { return len(j.pairs) / 2 }

// Miss names a job that a settle did not find under its token: the
// index of its call, and its index among the call's jobs.
type Miss struct{ Call, Job int }

// misses reads the replies of settle calls, one status a job after skip
// leading values, 1 for a job the call took, and returns the jobs it did
// not take; size(i) is the number of jobs of call i.
func misses(cmds []Reply, skip int, size func(i int) int) ([]Miss, error) {
	var out []Miss
	for i, cmd := range cmds {
		st, err := cmd.Int64Slice()
		if err != nil {
			return nil, err
		}
		for j := range size(i) {
			if skip+j >= len(st) || st[skip+j] != 1 {
				out = append(out, Miss{i, j})
			}
		}
	}
	return out, nil
}

// ackCall is the ack call of j.
func (s *Store) ackCall(j *Jobs) Call {
	qk := s.keys.Queue(j.Queue)
	keys := []string{qk.Reserved, qk.State, qk.Payloads, qk.Errors}
	if j.Progressed || j.Grouped {
		// The group keys come after the progress hash.
		keys = append(keys, qk.Progress)
	}
	if j.Grouped {
		keys = append(append(keys, qk.Groups()...), qk.Notify)
	}
	return Call{Script: scriptAck, Keys: keys, Args: j.pairs}
}

// Ack deletes finished jobs, acks and then finishes, in one round trip
// with the doorbells bells rung behind them (RunRinging). A Miss's Call
// counts the acks first, then the finishes.
func (s *Store) Ack(ctx context.Context, acks []Jobs, fins []FinishJobs, bells []string) ([]Miss, error) {
	if len(acks)+len(fins) == 0 {
		return nil, nil
	}
	calls := make([]Call, 0, len(acks)+len(fins))
	for i := range acks {
		calls = append(calls, s.ackCall(&acks[i]))
	}
	for i := range fins {
		calls = append(calls, s.finishCall(&fins[i]))
	}
	cmds, err := s.RunRinging(ctx, calls, bells)
	if err != nil {
		return nil, err
	}
	return misses(cmds, 0, func(i int) int {
		if i < len(acks) {
			return acks[i].Len()
		}
		return fins[i-len(acks)].Len()
	})
}

// Release is how a release puts jobs back.
type Release struct {
	// Delay in ms before the jobs are ready again.
	Delay int64
	// Exception counts the release toward the jobs' exceptions; Deferral
	// gives back the attempt their start counted. At most one is set.
	Exception, Deferral bool
	// Error is recorded as the released attempts' error; "" records
	// none.
	Error string
}

// Release puts reserved jobs back on their queues, with bells rung as in
// Ack.
func (s *Store) Release(ctx context.Context, jobs []Jobs, r Release, bells []string) ([]Miss, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	exc := "0"
	switch {
	case r.Exception:
		exc = "1"
	case r.Deferral:
		exc = "d" // release.lua
	}
	calls := make([]Call, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		qk := s.keys.Queue(j.Queue)
		if r.Error != "" || j.Grouped {
			// The group keys come after the errors hash; "" records no error.
			keys := []string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Notify, qk.Errors}
			if j.Grouped {
				keys = append(keys, qk.Groups()...)
			}
			calls[i] = Call{Script: scriptRelease, Keys: keys, Args: append([]any{r.Delay, exc, r.Error}, j.pairs...)}
			continue
		}
		calls[i] = Call{Script: scriptRelease, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Notify}, Args: append([]any{r.Delay, exc}, j.pairs...)}
	}
	cmds, err := s.RunRinging(ctx, calls, bells)
	if err != nil {
		return nil, err
	}
	return misses(cmds, 0, func(i int) int { return jobs[i].Len() })
}

// Unreserve gives back reserved jobs that never started: they go back
// to the front of their ready lists, in order, and lose the attempt
// their reserve counted. The script rings the doorbells.
func (s *Store) Unreserve(ctx context.Context, jobs []Jobs) ([]Miss, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	calls := make([]Call, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		qk := s.keys.Queue(j.Queue)
		keys := []string{qk.Ready, qk.Reserved, qk.State, qk.Notify}
		if j.Grouped {
			keys = append(keys, qk.Groups()...)
		}
		calls[i] = Call{Script: scriptUnreserve, Keys: keys, Args: j.pairs}
	}
	cmds, err := s.Run(ctx, calls)
	if err != nil {
		return nil, err
	}
	return misses(cmds, 0, func(i int) int { return jobs[i].Len() })
}

// Extend renews the leases of jobs to lease ms from now. It returns the
// jobs it did not renew: lost, and cancelled, those an operator
// cancelled (they are in the failed store).
func (s *Store) Extend(ctx context.Context, jobs []Jobs, lease int64) (lost, cancelled []Miss, err error) {
	if len(jobs) == 0 {
		return nil, nil, nil
	}
	calls := make([]Call, len(jobs))
	for i := range jobs {
		qk := s.keys.Queue(jobs[i].Queue)
		calls[i] = Call{Script: scriptExtend, Keys: []string{qk.Reserved, qk.State, qk.Failed}, Args: append([]any{lease}, jobs[i].pairs...)}
	}
	cmds, err := s.Run(ctx, calls)
	if err != nil {
		return nil, nil, err
	}
	for i, cmd := range cmds {
		st, err := cmd.Int64Slice()
		if err != nil {
			return nil, nil, err
		}
		for j := range jobs[i].Len() {
			switch {
			case 1+j < len(st) && st[1+j] == 1:
			case 1+j < len(st) && st[1+j] == 2:
				cancelled = append(cancelled, Miss{i, j})
			default:
				lost = append(lost, Miss{i, j})
			}
		}
	}
	return lost, cancelled, nil
}

// Start starts held jobs, named by their plain tokens: it counts each
// one's attempt and moves it to its plain token, one call each of jobs.
// It calls each with each call's index and reply: the attempt count of
// each of its jobs, 0 for a job no longer held under its token, or the
// call's error.
func (s *Store) Start(ctx context.Context, jobs []Jobs, each func(call int, attempts []int64, err error)) {
	calls := make([]Call, len(jobs))
	for i := range jobs {
		qk := s.keys.Queue(jobs[i].Queue)
		calls[i] = Call{Script: scriptStart, Keys: []string{qk.Reserved, qk.State}, Args: jobs[i].pairs}
	}
	cmds, _ := s.Run(ctx, calls)
	for i, cmd := range cmds {
		got, err := cmd.Int64Slice()
		if err == nil && len(got) != jobs[i].Len() {
			err = fmt.Errorf("unexpected reply %v", got)
		}
		each(i, got, err)
	}
}

// FailJobs is the jobs of one queue that one fail call moves into the
// failed store.
type FailJobs struct {
	Queue   string
	Grouped bool // as in Jobs

	args []any // id, token, info, ...
	n    int
}

// Add adds job id, reserved under token, with what the failed store
// keeps of its failure.
func (f *FailJobs) Add(id, token string, info FailedInfo) error {
	b, err := info.Encode()
	if err != nil {
		return fmt.Errorf("fail job %s: %w", id, err)
	}
	f.args = append(f.args, id, token, b)
	f.n++
	return nil
}

// Len is the number of jobs.
func (f *FailJobs) Len() int { return f.n }

// Fail moves reserved jobs into the failed store, then trims it to
// maxCount jobs and maxAge ms (0: no bound), with bells rung as in Ack.
// trimmed holds, per call of fails, how many old entries trimming
// dropped.
func (s *Store) Fail(ctx context.Context, fails []FailJobs, maxCount, maxAge int64, bells []string) (miss []Miss, trimmed []int64, err error) {
	if len(fails) == 0 {
		return nil, nil, nil
	}
	calls := make([]Call, len(fails))
	for i := range fails {
		f := &fails[i]
		qk := s.keys.Queue(f.Queue)
		keys := []string{qk.Reserved, qk.State, qk.Payloads, qk.Failed, qk.FailedPayloads, qk.FailedInfo, qk.Errors, qk.FailedErrors, qk.Progress}
		if f.Grouped {
			keys = append(append(keys, qk.Groups()...), qk.Notify)
		}
		keys = append(keys, qk.FailedTrimmed)
		calls[i] = Call{Script: scriptFail, Keys: keys, Args: append([]any{maxCount, maxAge}, f.args...)}
	}
	cmds, err := s.RunRinging(ctx, calls, bells)
	if err != nil {
		return nil, nil, err
	}
	miss, err = misses(cmds, 0, func(i int) int { return fails[i].Len() })
	if err != nil {
		return nil, nil, err
	}
	trimmed = make([]int64, len(cmds))
	for i, cmd := range cmds {
		if st, err := cmd.Int64Slice(); err == nil && len(st) > fails[i].Len() {
			trimmed[i] = st[fails[i].Len()]
		}
	}
	return miss, trimmed, nil
}
