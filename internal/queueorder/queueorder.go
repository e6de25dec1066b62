package queueorder

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobgen/jobgen/internal/qname"
	"github.com/jobgen/jobgen/internal/rdb"
)

// For is how long a worker skips a queue whose keys Redis refuses
// (WRONGTYPE) before it tries the queue again.
const For = 5 * time.Second

// Quarantine holds the queues whose reserve Redis refused because one of
// their keys holds another type (a key set by hand or by another
// program): a worker skips such a queue for For, so that one broken
// queue does not keep the queues after it from being served, and logs
// it once when it breaks and once when it is served again. Failures to
// reach Redis quarantine nothing: every queue would fail alike, and the
// fetch loop's backoff handles them. The zero value holds no queue; it
// is safe for concurrent use.
type Quarantine struct {
	n     atomic.Int32 // len(until), read without mu on every reserve
	mu    sync.Mutex
	until map[string]time.Time // queue -> when to try it again
}

// Weighted returns queues in an order drawn at random, each next with
// the chance of its weight over the sum of those left.
func Weighted(queues []string, weights map[string]int) []string {
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

// Healthy returns queues but those in quarantine, in their order; all
// of them if every one is, so that a worker never waits on nothing.
func (s *Quarantine) Healthy(queues []string) []string {
	if s.n.Load() == 0 {
		return queues // the usual case, with no lock taken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		if until, ok := s.until[q]; !ok || !now.Before(until) {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return queues
	}
	return out
}

// Note records how a reserve from queue went: a WRONGTYPE error puts
// the queue in quarantine, and says so (true) for the caller to go on
// with the next queue; a success takes it out, if it was in. Each
// change is logged to log.
func (s *Quarantine) Note(queue string, err error, log *slog.Logger) (quarantined bool) {
	if err == nil && s.n.Load() == 0 || err != nil && !rdb.HasErrorPrefix(err, "WRONGTYPE") {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, was := s.until[queue]
	if err == nil {
		if was {
			delete(s.until, queue)
			s.n.Store(int32(len(s.until)))
			log.Info("queue served again after its keys were refused", "queue", queue)
		}
		return false
	}
	if s.until == nil {
		s.until = map[string]time.Time{}
	}
	s.until[queue] = time.Now().Add(For)
	s.n.Store(int32(len(s.until)))
	if !was {
		log.Error("queue skipped: Redis refuses its keys; the worker serves its other queues and tries it again every "+For.String(), "queue", queue, "err", err)
	}
	return true
}

// Check names the first fault of a worker's queues and their weights,
// as the tail of a message after "WorkerConfig.", or returns "": a queue
// name that qname refuses, a queue listed twice, a queue of queues
// without a weight of at least 1 when weights is not nil, or a weight
// for a queue that is not one of queues.
func Check(queues []string, weights map[string]int) string {
	seen := map[string]bool{}
	for _, q := range queues {
		if err := qname.Validate(q); err != nil {
			return "Queues: " + err.Error()
		}
		if seen[q] {
			return fmt.Sprintf("Queues lists %q twice", q)
		}
		seen[q] = true
		if weights != nil && weights[q] < 1 {
			return fmt.Sprintf("Weights[%q] (%d) must be at least 1: every queue of Queues needs a weight", q, weights[q])
		}
	}
	for q := range weights {
		if !seen[q] {
			return fmt.Sprintf("Weights names %q, which is not one of Queues", q)
		}
	}
	return ""
}
