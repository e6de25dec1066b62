package harness

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/runtime"
)

// Outcome is what a checker makes of a run, from the dispatcher's
// acknowledged jobs, the workers' ledgers and what is left in Redis.
type Outcome struct {
	// Acked is the number of dispatches Redis acknowledged.
	Acked int
	// Runs and Completed count handler runs started and finished with
	// success, over all jobs.
	Runs, Completed int
	// Done is the number of acknowledged jobs with a completed run.
	Done int
	// Failed is the number of acknowledged jobs in the failed store.
	Failed int
	// Live is the number of acknowledged jobs still in the queue.
	Live int
	// Lost lists acknowledged jobs with no completed run, not in the
	// failed store and not in the queue.
	Lost []string
	// Duplicates counts completed runs beyond one per job, and DupJobs
	// the jobs that had them.
	Duplicates, DupJobs int
	// Misplaced lists jobs found in more than one place: completed and
	// failed, completed and still queued, failed and still queued.
	Misplaced []string
	// Unacked counts jobs that ran although their dispatch returned an
	// error (a push whose reply was lost).
	Unacked int
	// Problems lists inconsistencies of the queue's Redis keys.
	Problems []string
}

// String summarises the outcome.
func (o Outcome) String() string {
	return fmt.Sprintf("acked %d, runs %d, completed runs %d, done %d, failed %d, live %d, lost %d, duplicates %d (%d jobs), misplaced %d, ran unacked %d, key problems %d",
		o.Acked, o.Runs, o.Completed, o.Done, o.Failed, o.Live, len(o.Lost), o.Duplicates, o.DupJobs, len(o.Misplaced), o.Unacked, len(o.Problems))
}

// Runs groups ledger records by job ID: the S and F records of each job.
type Runs map[string]*JobRuns

// JobRuns is what the ledgers say of one job.
type JobRuns struct {
	Starts   []faultworker.Record
	Finishes []faultworker.Record
}

// GroupRuns groups records by job.
func GroupRuns(recs []faultworker.Record) Runs {
	out := Runs{}
	for _, r := range recs {
		if r.Kind != 'S' && r.Kind != 'F' {
			continue
		}
		j := out[r.ID]
		if j == nil {
			j = &JobRuns{}
			out[r.ID] = j
		}
		if r.Kind == 'S' {
			j.Starts = append(j.Starts, r)
		} else {
			j.Finishes = append(j.Finishes, r)
		}
	}
	return out
}

// Unstarted counts the attempts that were reserved but never started:
// for each job, the attempt numbers below its highest started one that
// have no start of their own. Such an attempt was burned by a worker that
// died holding the job before running it (a prefetched job), or by a
// reservation whose reply was lost.
func (r Runs) Unstarted() int {
	n := 0
	for _, j := range r {
		seen := map[int]bool{}
		top := 0
		for _, s := range j.Starts {
			seen[s.Attempt] = true
			top = max(top, s.Attempt)
		}
		for a := 1; a < top; a++ {
			if !seen[a] {
				n++
			}
		}
	}
	return n
}

// Check compares the acknowledged jobs (ID -> sequence number) with the
// ledgers and with Redis, for the jobs of queue.
func Check(ctx context.Context, e *runtime.Engine, queue string, acked map[string]int, recs []faultworker.Record) (Outcome, error) {
	o := Outcome{Acked: len(acked)}
	runs := GroupRuns(recs)
	for _, j := range runs {
		o.Runs += len(j.Starts)
		o.Completed += len(j.Finishes)
	}
	failed, err := FailedIDs(ctx, e, queue)
	if err != nil {
		return o, err
	}
	k := Keys(e.Config().Prefix, queue)
	live, err := e.Client().HKeys(ctx, k.Payloads).Result()
	if err != nil {
		return o, err
	}
	liveSet := map[string]bool{}
	for _, id := range live {
		liveSet[id] = true
	}
	for id := range acked {
		j := runs[id]
		done := j != nil && len(j.Finishes) > 0
		places := 0
		if done {
			o.Done++
			places++
			if n := len(j.Finishes); n > 1 {
				o.Duplicates += n - 1
				o.DupJobs++
			}
		}
		if failed[id] {
			o.Failed++
			places++
		}
		if liveSet[id] {
			o.Live++
			places++
		}
		switch {
		case places == 0:
			o.Lost = append(o.Lost, id)
		case places > 1:
			o.Misplaced = append(o.Misplaced, fmt.Sprintf("%s (seq %d): completed %v, failed %v, live %v", id, acked[id], done, failed[id], liveSet[id]))
		}
	}
	for id := range runs {
		if _, ok := acked[id]; !ok {
			o.Unacked++
		}
	}
	sort.Strings(o.Lost)
	o.Problems, err = Audit(ctx, e.Client(), e.Config().Prefix, queue)
	return o, err
}

// FailedIDs returns the IDs in queue's failed store.
func FailedIDs(ctx context.Context, e *runtime.Engine, queue string) (map[string]bool, error) {
	ids, err := e.Client().ZRange(ctx, Keys(e.Config().Prefix, queue).Failed, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// Audit checks that queue's keys agree with each other: every job ID in
// the ready list, delayed set or reserved set has a payload, none is in
// two of them or twice in one, every payload belongs to a job in one of
// them, only reserved jobs hold a token, and only live jobs have
// bookkeeping. It returns what is wrong.
func Audit(ctx context.Context, rdb redis.UniversalClient, prefix, queue string) ([]string, error) {
	k := Keys(prefix, queue)
	var ready, delayed, reserved, payloads *redis.StringSliceCmd
	var state, attempts, exceptions, tokens *redis.MapStringStringCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		ready = p.LRange(ctx, k.Ready, 0, -1)
		delayed = p.ZRange(ctx, k.Delayed, 0, -1)
		reserved = p.ZRange(ctx, k.Reserved, 0, -1)
		payloads = p.HKeys(ctx, k.Payloads)
		state = p.HGetAll(ctx, k.State)
		attempts = p.HGetAll(ctx, k.Attempts)
		exceptions = p.HGetAll(ctx, k.Exceptions)
		tokens = p.HGetAll(ctx, k.Tokens)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit %q: %w", queue, err)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	where := map[string][]string{}
	for _, s := range []struct {
		name string
		ids  []string
	}{{"ready", ready.Val()}, {"delayed", delayed.Val()}, {"reserved", reserved.Val()}} {
		for _, id := range s.ids {
			where[id] = append(where[id], s.name)
		}
	}
	payload := map[string]bool{}
	for _, id := range payloads.Val() {
		payload[id] = true
	}
	for id, w := range where {
		if len(w) > 1 {
			bad("job %s is in %s", id, strings.Join(w, " and "))
		}
		// Reserve drops ready IDs with no payload, so only a ready ID
		// may lack one.
		if !payload[id] && !slices.Equal(w, []string{"ready"}) {
			bad("job %s is %s but has no payload", id, strings.Join(w, ", "))
		}
	}
	for id := range payload {
		if len(where[id]) == 0 {
			bad("job %s has a payload but is in no list or set (unreachable)", id)
		}
	}
	holdsToken := map[string]bool{}
	for id := range tokens.Val() {
		holdsToken[id] = true
	}
	for id, st := range state.Val() {
		if parts := strings.SplitN(st, ":", 3); len(parts) != 3 {
			bad("job %s has malformed state %q", id, st)
		} else if parts[2] != "" {
			holdsToken[id] = true
		}
	}
	for id := range holdsToken {
		if !slices.Contains(where[id], "reserved") {
			bad("job %s holds a token but is not reserved", id)
		}
	}
	for _, h := range []struct {
		name string
		m    map[string]string
	}{{"state", state.Val()}, {"attempts", attempts.Val()}, {"exceptions", exceptions.Val()}, {"tokens", tokens.Val()}} {
		for id := range h.m {
			if !payload[id] {
				bad("job %s has %s but no payload (leaked)", id, h.name)
			}
		}
	}
	sort.Strings(problems)
	return problems, nil
}

// Drain waits until queue has no ready, delayed or reserved job, and
// returns how long that took; it fails the test after timeout.
func Drain(t testing.TB, e *runtime.Engine, queue string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	ctx := context.Background()
	var last runtime.Sizes
	for time.Since(start) < timeout {
		s, err := runtime.NewInspector(e).Sizes(ctx, queue)
		if err == nil && s.Total() == 0 {
			return time.Since(start)
		}
		last = s
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("queue %q not drained after %v: %+v", queue, timeout, last)
	return 0
}

// RequireClean fails the test if o shows a lost, misplaced or live job,
// or a key problem; duplicates are checked by the caller, against its own
// bound.
func RequireClean(t testing.TB, o Outcome) {
	t.Helper()
	if len(o.Lost) > 0 {
		t.Errorf("lost %d acknowledged jobs: %v", len(o.Lost), head(o.Lost, 20))
	}
	if len(o.Misplaced) > 0 {
		t.Errorf("%d jobs in more than one place: %v", len(o.Misplaced), head(o.Misplaced, 20))
	}
	if o.Live > 0 {
		t.Errorf("%d jobs still queued after the drain", o.Live)
	}
	if len(o.Problems) > 0 {
		t.Errorf("%d key problems: %v", len(o.Problems), head(o.Problems, 20))
	}
}

func head[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}
