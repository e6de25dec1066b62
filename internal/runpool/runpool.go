package runpool

import "sync"

// Pool is the goroutines a worker runs its jobs on: each job's
// process, and its handler's attempt. A goroutine that finishes one
// waits for the next rather than exiting, up to the number a worker
// runs at once, so that a job neither starts a goroutine nor grows a
// fresh stack: Go starts a goroutine on a small stack and copies it
// each time a call needs more, and both cost more per job than a
// channel hand-off to a goroutine whose stack has grown already.
//
// A handler that never returns (abandoned past its context) keeps its
// goroutine, which the pool replaces when it needs one. A handler that
// locks its goroutine to its OS thread (runtime.LockOSThread) must
// unlock it before it returns, as the goroutine goes on to run other
// jobs.
//
// A Pool is safe for concurrent use.
type Pool struct {
	mu     sync.Mutex
	idle   []*runner // waiting for work, the most recent last
	max    int       // the most kept waiting
	closed bool
}

// New returns a pool that keeps up to max goroutines waiting for work.
func New(max int) *Pool { return &Pool{max: max} }

// runner is one goroutine of a Pool.
type runner struct{ work chan func() }

// Do runs f on a waiting goroutine of the pool, or on a new one.
func (p *Pool) Do(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		r.work <- f
		return
	}
	p.mu.Unlock()
	r := &runner{work: make(chan func(), 1)}
	r.work <- f
	go r.loop(p)
}

func (r *runner) loop(p *Pool) {
	_ = growStack() // stack.go
	for f := range r.work {
		f()
		if !p.park(r) {
			return
		}
	}
}

// park keeps r waiting for work, unless the pool is closed or full; it
// says whether it did.
func (p *Pool) park(r *runner) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= p.max {
		return false
	}
	p.idle = append(p.idle, r)
	return true
}

// Close ends the waiting goroutines; those running end when their work
// does. Work given to Do after Close runs on a goroutine that then ends.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, r := range idle {
		close(r.work)
	}
}
