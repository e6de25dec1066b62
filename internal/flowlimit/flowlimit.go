package flowlimit

import "sync"

// Limited is what an engine's reserves learned of the concurrency
// limits of the (physical) queues they reserved from: the settles of a
// limited queue's jobs ring its doorbell in their round trip, so that a
// worker the full limit keeps waiting takes the slot as it frees. Other
// queues' settles ring nothing. A nil *Limited knows no limit; it is
// safe for concurrent use.
type Limited struct {
	limited sync.Map // physical queue -> struct{}
}

// Note records whether queue has a concurrency limit.
func (f *Limited) Note(queue string, limited bool) {
	if f == nil {
		return
	}
	_, had := f.limited.Load(queue)
	switch {
	case limited && !had:
		f.limited.Store(queue, struct{}{})
	case !limited && had:
		f.limited.Delete(queue)
	}
}

// Has says whether queue had a concurrency limit at its last reserve.
func (f *Limited) Has(queue string) bool {
	if f == nil {
		return false
	}
	_, ok := f.limited.Load(queue)
	return ok
}

// Share is partition i's share of n over parts partitions: n/parts, and
// one more for each of the first n%parts.
func Share(n, parts, i int) int {
	s := n / parts
	if i < n%parts {
		s++
	}
	return s
}
