package runtime

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// quarantineFor is how long a worker skips a queue whose keys Redis
// refuses (WRONGTYPE) before it tries the queue again.
const quarantineFor = 5 * time.Second

// quarantine holds the queues whose reserve Redis refused because one of
// their keys holds another type (a key set by hand or by another
// program): a worker skips such a queue for quarantineFor, so that one
// broken queue does not keep the queues after it from being served, and
// logs it once when it breaks and once when it is served again.
// Failures to reach Redis quarantine nothing: every queue would fail
// alike, and the fetch loop's backoff handles them.
type quarantine struct {
	n     atomic.Int32 // len(until), read without mu on every reserve
	mu    sync.Mutex
	until map[string]time.Time // queue -> when to try it again
}

// queues returns the worker's queues, in priority order, without those in
// quarantine; all of them if every one is, so that a worker never waits
// on nothing.
func (w *Worker) queues() []string {
	if w.cfg.Weights != nil {
		return weighted(w.healthyQueues(), w.cfg.Weights)
	}
	return w.healthyQueues()
}

// weighted returns queues in an order drawn at random, each next with the
// chance of its weight over the sum of those left.
func weighted(queues []string, weights map[string]int) []string {
	left := append([]string(nil), queues...)
	out := make([]string, 0, len(left))
	for len(left) > 0 {
		sum := 0
		for _, q := range left {
			sum += weights[q]
		}
		n := rand.IntN(sum)
		i := 0
		for ; n >= weights[left[i]]; i++ {
			n -= weights[left[i]]
		}
		out = append(out, left[i])
		left = append(left[:i], left[i+1:]...)
	}
	return out
}

// healthyQueues returns the worker's queues but those in quarantine, in
// their order.
func (w *Worker) healthyQueues() []string {
	if w.sick.n.Load() == 0 {
		return w.cfg.Queues // the usual case, with no lock taken
	}
	w.sick.mu.Lock()
	defer w.sick.mu.Unlock()
	now := time.Now()
	out := make([]string, 0, len(w.cfg.Queues))
	for _, q := range w.cfg.Queues {
		if until, ok := w.sick.until[q]; !ok || !now.Before(until) {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return w.cfg.Queues
	}
	return out
}

// noteReserve records how a reserve from queue went: a WRONGTYPE error puts
// the queue in quarantine, and says so (true) for the caller to go on
// with the next queue; a success takes it out, if it was in.
func (w *Worker) noteReserve(queue string, err error) (quarantined bool) {
	if err == nil && w.sick.n.Load() == 0 || err != nil && !jobrdb.HasErrorPrefix(err, "WRONGTYPE") {
		return false
	}
	w.sick.mu.Lock()
	defer w.sick.mu.Unlock()
	_, was := w.sick.until[queue]
	if err == nil {
		if was {
			delete(w.sick.until, queue)
			w.sick.n.Store(int32(len(w.sick.until)))
			w.log.Info("queue served again after its keys were refused", "queue", queue)
		}
		return false
	}
	if w.sick.until == nil {
		w.sick.until = map[string]time.Time{}
	}
	w.sick.until[queue] = time.Now().Add(quarantineFor)
	w.sick.n.Store(int32(len(w.sick.until)))
	if !was {
		w.log.Error("queue skipped: Redis refuses its keys; the worker serves its other queues and tries it again every "+quarantineFor.String(), "queue", queue, "err", err)
	}
	return true
}
