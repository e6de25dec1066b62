package outboxbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// tracker records, for each job of a phase by its sequence number, when
// its transaction was about to commit and when its handler started, on
// one monotonic clock.
type tracker struct {
	base   time.Time
	commit []atomic.Int64 // ns since base, just before Commit; 0 if unset
	start  []atomic.Int64 // ns since base, when its handler started
	want   int64
	n      atomic.Int64 // jobs started
	dups   atomic.Int64 // starts of jobs started before
	stray  atomic.Int64 // starts of jobs with no sequence number here
	done   chan struct{}
}

func newTracker(n int) *tracker {
	return &tracker{
		base:   time.Now(),
		commit: make([]atomic.Int64, n),
		start:  make([]atomic.Int64, n),
		want:   int64(n),
		done:   make(chan struct{}),
	}
}

// now is the time since base, never 0.
func (t *tracker) now() int64 { return int64(time.Since(t.base)) | 1 }

// committing records that job seq's transaction is about to commit.
func (t *tracker) committing(seq int64) { t.commit[seq].Store(t.now()) }

// handle records that job seq's handler started: every handler calls it.
func (t *tracker) handle(seq int64) {
	if seq < 0 || seq >= int64(len(t.start)) {
		t.stray.Add(1)
		return
	}
	if !t.start[seq].CompareAndSwap(0, t.now()) {
		t.dups.Add(1)
		return
	}
	if t.n.Add(1) == t.want {
		close(t.done)
	}
}

// wait returns when every job has started, or with an error naming how
// many have not when timeout passes or ctx ends.
func (t *tracker) wait(ctx context.Context, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return fmt.Errorf("%d of %d jobs started in %v", t.n.Load(), t.want, timeout)
}

// lastStart returns when the last handler started, since base.
func (t *tracker) lastStart() time.Duration {
	var last int64
	for i := range t.start {
		last = max(last, t.start[i].Load())
	}
	return time.Duration(last)
}

// latencies returns, sorted, the time from commit to handler start of
// each job with both recorded.
func (t *tracker) latencies() []time.Duration {
	out := make([]time.Duration, 0, len(t.start))
	for i := range t.start {
		c, s := t.commit[i].Load(), t.start[i].Load()
		if c != 0 && s != 0 {
			out = append(out, time.Duration(s-c))
		}
	}
	slices.Sort(out)
	return out
}

// anomalies describes duplicate and stray starts, if any.
func (t *tracker) anomalies() string {
	var parts []string
	if n := t.dups.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicate starts", n))
	}
	if n := t.stray.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d starts of unknown jobs", n))
	}
	return strings.Join(parts, ", ")
}

// quantile returns the q quantile of sorted, by the nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
