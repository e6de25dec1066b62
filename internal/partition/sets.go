package partition

import (
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
)

// Set is the partitions of one queue, with an engine's turns over them.
// It is safe for concurrent use.
type Set struct {
	names []string     // physical queue names; names[0] is the queue itself
	next  atomic.Int64 // round robin for pushes
	start atomic.Int64 // round robin for reserves
}

// Names returns the partitions' names, the first being the queue itself.
// The caller must not change it.
func (s *Set) Names() []string { return s.names }

// For is the one choice of the partition a new job goes to. by ""
// takes the partitions in turn; any other by (a job ID, a debounce key)
// picks one by its hash, the same on every engine, so that a push made
// again, by this process or another, finds what the first one wrote.
func (s *Set) For(by string) string {
	if by == "" {
		i := s.next.Add(1) - 1
		return s.names[int(i%int64(len(s.names)))]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(by))
	return s.names[h.Sum32()%uint32(len(s.names))]
}

// NextStart is the partition a reserve of the whole queue starts from:
// one further on each call, so that every partition is served.
func (s *Set) NextStart() int { return int(s.start.Add(1) - 1) }

// Sets is an engine's cache of its queues' partition sets, and of the
// queue each partition's name belongs to. The zero value is empty; it is
// safe for concurrent use.
type Sets struct {
	sets    sync.Map // queue -> *Set
	logical sync.Map // partition name -> queue
}

// Of returns the set of queue split into n partitions, made once and
// kept, or nil if n is at most 1.
func (c *Sets) Of(queue string, n int) *Set {
	if n <= 1 {
		return nil
	}
	if ps, ok := c.sets.Load(queue); ok {
		return ps.(*Set)
	}
	ps := &Set{names: Names(queue, n)}
	for _, name := range ps.names[1:] {
		c.logical.Store(name, queue)
	}
	got, _ := c.sets.LoadOrStore(queue, ps)
	return got.(*Set)
}

// Logical returns the queue a partition belongs to, among the sets Of
// has made; other names are returned as they are.
func (c *Sets) Logical(name string) string {
	if !strings.Contains(name, Sep) {
		return name
	}
	if q, ok := c.logical.Load(name); ok {
		return q.(string)
	}
	return name
}
