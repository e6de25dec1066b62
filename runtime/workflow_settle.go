package runtime

import (
	"context"
	"sync"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// The ends of steps are recorded in batches, by group commit: a worker's
// goroutine whose step ended joins the ends waiting for a call; if no
// call is in flight it makes one for every end waiting (one script call a
// workflow, in one pipeline), else it waits for the goroutine making it.
// Each end is recorded before its job's ack, as one call of its own
// would be, and each goroutine then pushes what its own end released; a
// fan-out's children ending together cost a script call per batch, not
// per child.

// settleReq is one end waiting to be recorded.
type settleReq struct {
	wf  string
	end jobrdb.WfEnd
	// ch gets true when the goroutine is to make the next call (its end
	// is still waiting), false once its end was recorded.
	ch  chan bool
	out jobrdb.WfOutcome
	err error
}

// settleBatcher gathers the ends of an engine's steps.
type settleBatcher struct {
	mu      sync.Mutex
	waiting []*settleReq
	busy    bool // a call is in flight, or about to be made
}

// settle records the end of step of workflow wf and returns its
// outcome.
func (e *Engine) settleStep(ctx context.Context, wf string, end jobrdb.WfEnd) (jobrdb.WfOutcome, error) {
	b := &e.settles
	r := &settleReq{wf: wf, end: end, ch: make(chan bool, 1)}
	b.mu.Lock()
	b.waiting = append(b.waiting, r)
	if b.busy {
		b.mu.Unlock()
		if lead := <-r.ch; !lead {
			return r.out, r.err
		}
		b.mu.Lock()
	}
	b.busy = true
	batch := b.waiting
	b.waiting = nil
	b.mu.Unlock()

	e.settleBatch(ctx, batch)

	b.mu.Lock()
	if len(b.waiting) > 0 {
		b.waiting[0].ch <- true // it makes the next call
	} else {
		b.busy = false
	}
	b.mu.Unlock()
	for _, q := range batch {
		if q != r {
			q.ch <- false
		}
	}
	return r.out, r.err
}

// settleBatch records batch's ends, a script call per workflow, in one
// pipeline.
func (e *Engine) settleBatch(ctx context.Context, batch []*settleReq) {
	index := map[string]int{}
	var ids []string
	var ends [][]jobrdb.WfEnd
	var reqs [][]*settleReq
	for _, q := range batch {
		i, ok := index[q.wf]
		if !ok {
			i = len(ids)
			index[q.wf] = i
			ids = append(ids, q.wf)
			ends = append(ends, nil)
			reqs = append(reqs, nil)
		}
		ends[i] = append(ends[i], q.end)
		reqs[i] = append(reqs[i], q)
	}
	out, err := e.store.WfSettleMany(ctx, ids, ends)
	for i, qs := range reqs {
		for k, q := range qs {
			if out != nil && k < len(out[i]) {
				q.out = out[i][k]
			} else {
				q.err = err
			}
		}
	}
}
