package bench

import (
	"slices"
	"sync/atomic"
	"time"
)

// tracker counts the runs of jobs 0..n-1 and keeps, for each job's first
// run, how long after its time the handler started.
type tracker struct {
	n        int
	runs     []atomic.Int32
	delay    []int64 // ns from the job's time to its first run
	distinct atomic.Int64
	stray    atomic.Int64 // runs of sequence numbers outside 0..n-1
	last     atomic.Int64 // unix ns of the last first run
	done     chan struct{}
}

func newTracker(n int) *tracker {
	t := &tracker{n: n, runs: make([]atomic.Int32, n), delay: make([]int64, n), done: make(chan struct{})}
	if n == 0 {
		close(t.done)
	}
	return t
}

// touch writes every page of the tracker's arrays, so that they are
// resident before the workers start: the rss phase then measures the
// worker, not the tracker filling in.
func (t *tracker) touch() {
	for i := range t.delay {
		t.delay[i] = -1
		t.delay[i] = 0
	}
	for i := range t.runs {
		t.runs[i].Store(0)
	}
}

// handle records the start of a run of job seq, with time at.
func (t *tracker) handle(seq, at int64) {
	now := time.Now().UnixNano()
	if seq < 0 || seq >= int64(t.n) {
		t.stray.Add(1)
		return
	}
	if t.runs[seq].Add(1) != 1 {
		return
	}
	t.delay[seq] = now - at
	if t.distinct.Add(1) == int64(t.n) {
		t.last.Store(now)
		close(t.done)
	}
}

// wait returns true once every job has run, false if timeout passes
// first.
func (t *tracker) wait(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return true
	case <-timer.C:
		return false
	}
}

// lastRun returns when the last job first ran; zero if not all have.
func (t *tracker) lastRun() time.Time {
	if ns := t.last.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// counts returns the extra runs of jobs that ran more than once (plus
// stray runs), and the number of jobs that never ran. Call it after the
// workers have stopped.
func (t *tracker) counts() (duplicates, missing int) {
	for i := range t.runs {
		switch r := int(t.runs[i].Load()); {
		case r == 0:
			missing++
		case r > 1:
			duplicates += r - 1
		}
	}
	return duplicates + int(t.stray.Load()), missing
}

// Latency summarises delays from a job's time to its handler's start, in
// milliseconds.
type Latency struct {
	Min float64 `json:"min_ms"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// latency summarises the delays of the jobs that ran; nil if none did.
func (t *tracker) latency() *Latency {
	var d []int64
	for i := range t.runs {
		if t.runs[i].Load() > 0 {
			d = append(d, t.delay[i])
		}
	}
	if len(d) == 0 {
		return nil
	}
	slices.Sort(d)
	at := func(p float64) float64 {
		i := min(max(int(float64(len(d))*p/100+0.5)-1, 0), len(d)-1)
		return ms(d[i])
	}
	return &Latency{Min: ms(d[0]), P50: at(50), P90: at(90), P99: at(99), Max: ms(d[len(d)-1])}
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
