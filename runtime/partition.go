package runtime

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jobgen/jobgen/internal/nextdue"
	"github.com/jobgen/jobgen/internal/partition"
)

// Partitioned queues.
//
// EngineConfig.Partitions splits a queue into N partitions with hash
// tags of their own, spread over the slot space; internal/partition
// names them (partition 0 is the queue itself, partition i "emails#i" or
// "emails#i.k").
//
// Dispatch spreads the jobs of a partitioned queue over its partitions,
// round robin per engine. A worker's Reserve of the queue takes jobs from
// the partitions in turn, starting one further each time, so every
// partition is served; the worker's queue priority is unchanged: a
// partitioned queue is drained, over all its partitions, before the
// queues after it. Order is kept within a partition, not across them.
// Sizes, Clear, Pause, Resume, Paused, Migrate, Wait and every FailedStore
// method take the queue's name and act on all its partitions; the failed
// jobs they return name the queue, not the partition.
//
// A job's Ref (and so JobInfo.Queue and events) names the partition it
// was reserved from, such as "emails#2", since that is where its keys
// are. Jobs pushed to the queue's own name by a path that picks no
// partition (jobs queued before the queue was partitioned, an engine
// configured without partitions) land in partition 0, which workers
// drain like the others. A failed job retried goes back to its own
// partition. Shrinking the number of partitions strands the jobs of the
// partitions dropped: drain them first.
//
// Nothing spans partitions atomically: each partition is a queue of its
// own, and a call on the whole queue is one call per partition.

// validateQueueOrPartition is ValidateQueueName for the Engine methods
// that also take the name of a partition, "queue#i" or "queue#i.k" as
// partition.Names makes them.
func validateQueueOrPartition(name string) error {
	if err := partition.ValidateName(name); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

func validatePartitions(p map[string]int) error {
	for q, n := range p {
		if err := ValidateQueueName(q); err != nil {
			return fmt.Errorf("EngineConfig.Partitions: %w", err)
		}
		if n < 1 || n > partition.Max {
			return fmt.Errorf("%w: EngineConfig.Partitions[%q] (%d) must be between 1 and %d", ErrInvalid, q, n, partition.Max)
		}
	}
	return nil
}

// partitionsOf returns the partitions of queue, or nil if it has none.
// The engine's physical view (Engine.phys) has none: a partition loop
// runs each call on it, with the partition's own name.
func (e *Engine) partitionsOf(queue string) *partition.Set {
	return e.parts.Of(queue, e.cfg.Partitions[queue])
}

// partitionFor is the one choice of the partition a new job of queue
// goes to (partition.Set.For): queue itself when it has none. by ""
// takes the partitions in turn; any other by (a job ID, a debounce key)
// picks one by its hash, the same on every engine, so that a push made
// again, by this process or another, finds what the first one wrote (a
// chain link's marker, an outbox row's mark, a debounce burst).
func (e *Engine) partitionFor(queue, by string) string {
	if ps := e.partitionsOf(queue); ps != nil {
		return ps.For(by)
	}
	return queue
}

// logicalQueue returns the queue a partition belongs to; other names are
// returned as they are.
func (e *Engine) logicalQueue(name string) string { return e.parts.Logical(name) }

// PartitionNames returns the names of the n partitions of queue, as an
// engine with EngineConfig.Partitions[queue] = n uses them: the first is
// queue itself. Engine methods given the name of a partition past the
// first act on that partition alone; the queue's own name means all.
func PartitionNames(queue string, n int) []string { return partition.Names(queue, max(n, 1)) }

// QueuePartitions returns the names of queue's partitions as this
// engine splits it (EngineConfig.Partitions), the first being queue
// itself, or queue alone if it has none. PerPartition's methods take
// each for that partition alone, so that a tool may read a queue of
// many partitions a few partitions at a time.
func (i *Inspector) QueuePartitions(queue string) []string {
	return slices.Clone(i.e.queueNames(queue))
}

// PerPartition returns an Inspector of the same engine on which a
// partitioned queue's own name means its first partition alone, and
// the name of another partition (QueuePartitions) that partition, as on
// an engine without EngineConfig.Partitions. Its methods that change
// queues change one partition too.
func (i *Inspector) PerPartition() *Inspector { return i.e.phys.inspector() }

// overPartitions runs op on the partitions of queue in turn, from the
// one at start, each on the engine's physical view with the partition's
// own name, until op says it is done or fails: the one partition loop.
// ok is false if queue has no partitions, and op did not run.
func (e *Engine) overPartitions(queue string, start int, op func(pe *Engine, name string) (done bool, err error)) (ok bool, err error) {
	ps := e.partitionsOf(queue)
	if ps == nil {
		return false, nil
	}
	names := ps.Names()
	for k := range names {
		done, err := op(e.phys, names[(start+k)%len(names)])
		if err != nil || done {
			return true, err
		}
	}
	return true, nil
}

// reservePartitioned is Reserve on a partitioned queue: it takes up to n
// jobs from its partitions in turn, starting one further on each call.
// ok is false if queue has no partitions.
func (e *Engine) reservePartitioned(ctx context.Context, queue string, n int, lease time.Duration, hold bool) (b ReserveResult, ok bool, err error) {
	var start int
	if ps := e.partitionsOf(queue); ps != nil {
		start = ps.NextStart()
	}
	ok, err = e.overPartitions(queue, start, func(pe *Engine, name string) (bool, error) {
		got, err := pe.reserve(ctx, name, n-len(b.Jobs), lease, hold)
		if err != nil {
			return true, err
		}
		b.Now = got.Now
		if b.clock.IsZero() {
			b.clock = got.clock
		}
		b.NextDue = nextdue.Earliest(b.NextDue, got.NextDue)
		b.NextExpiry = nextdue.Earliest(b.NextExpiry, got.NextExpiry)
		if !got.open.IsZero() && (b.open.IsZero() || got.open.Before(b.open)) {
			b.open, b.openQueue = got.open, got.openQueue
		}
		b.Jobs = append(b.Jobs, got.Jobs...)
		return len(b.Jobs) == n, nil
	})
	return b, ok, err
}

// pageOfPartitions lists a page of a partitioned queue's jobs as one
// list, partition after partition: list returns a partition's jobs from
// offset on (at most the page's limit) and how many it holds. It returns
// the page, the jobs of every partition, and ok false if queue has no
// partitions.
func pageOfPartitions[T any](e *Engine, queue string, offset, limit int, list func(pi *Inspector, name string, offset int) ([]T, int64, error)) (out []T, total int64, ok bool, err error) {
	ok, err = e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		jobs, n, err := list(pe.inspector(), name, max(offset-int(total), 0))
		if offset < int(total+n) && len(out) < limit {
			out = append(out, jobs[:min(len(jobs), limit-len(out))]...)
		}
		total += n
		return false, err
	})
	return out, total, ok, err
}

// migratePartitioned is Migrate on every partition of a queue.
func (e *Engine) migratePartitioned(ctx context.Context, queue string) (m Migration, ok bool, err error) {
	ok, err = e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		got, err := pe.broker().Migrate(ctx, name)
		m.Now = got.Now
		m.Delayed += got.Delayed
		m.Expired += got.Expired
		m.NextDue = nextdue.Earliest(m.NextDue, got.NextDue)
		m.NextExpiry = nextdue.Earliest(m.NextExpiry, got.NextExpiry)
		return false, err
	})
	return m, ok, err
}

// sizesPartitioned sums the sizes of a queue's partitions.
func (e *Engine) sizesPartitioned(ctx context.Context, queue string) (s Sizes, ok bool, err error) {
	ok, err = e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		got, err := pe.inspector().Sizes(ctx, name)
		s.Ready += got.Ready
		s.Delayed += got.Delayed
		s.Reserved += got.Reserved
		s.Failed += got.Failed
		return false, err
	})
	return s, ok, err
}

// eachPartition runs fn on every partition of queue, on the engine's
// physical view, and sums what it returns; ok is false if queue has no
// partitions.
func (e *Engine) eachPartition(queue string, fn func(pe *Engine, name string) (int64, error)) (total int64, ok bool, err error) {
	ok, err = e.overPartitions(queue, 0, func(pe *Engine, name string) (bool, error) {
		n, err := fn(pe, name)
		total += n
		return false, err
	})
	return total, ok, err
}

// pausedPartitioned reports whether any partition of a queue is paused.
func (e *Engine) pausedPartitioned(ctx context.Context, queue string) (paused, ok bool, err error) {
	n, ok, err := e.eachPartition(queue, func(pe *Engine, p string) (int64, error) {
		paused, err := pe.inspector().QueuePaused(ctx, p)
		if paused {
			return 1, err
		}
		return 0, err
	})
	return n > 0, ok, err
}

// waitKeys expands the partitioned queues of a Wait into their
// partitions, each reported as its queue.
func (e *Engine) waitKeys(ctx context.Context, queues []string) []string {
	if len(e.cfg.Partitions) == 0 {
		return queues
	}
	var out []string
	for _, q := range queues {
		if ps := e.partitionsOf(q); ps != nil {
			out = append(out, ps.Names()...)
		} else {
			out = append(out, q)
		}
	}
	return out
}

// The failed store of a partitioned queue is the union of its
// partitions' stores.

// partitions returns the partitions of queue, or nil, and the failed
// store of the engine's physical view, to run each partition's call on.
func (s *FailedStore) partitions(queue string) (*partition.Set, *FailedStore) {
	return s.e.partitionsOf(queue), &FailedStore{e: s.e.phys}
}

func (s *FailedStore) listPartitioned(ctx context.Context, queue string, offset, limit int) ([]FailedJob, bool, error) {
	ps, phys := s.partitions(queue)
	if ps == nil {
		return nil, false, nil
	}
	if offset < 0 || limit < 1 {
		return nil, true, fmt.Errorf("%w: list failed jobs: offset (%d) must be >= 0 and limit (%d) >= 1", ErrInvalid, offset, limit)
	}
	// The page is among the first offset+limit of some partition.
	want := offset + limit
	if want < offset {
		want = int(^uint(0) >> 1)
	}
	var all []FailedJob
	for _, name := range ps.Names() {
		got, err := phys.List(ctx, name, 0, want)
		if err != nil {
			return nil, true, err
		}
		all = append(all, got...)
	}
	slices.SortStableFunc(all, func(a, b FailedJob) int { return b.FailedAt.Compare(a.FailedAt) })
	for i := range all {
		all[i].Queue = queue
	}
	if offset >= len(all) {
		return nil, true, nil
	}
	return all[offset:min(len(all), want)], true, nil
}

func (s *FailedStore) getPartitioned(ctx context.Context, queue, id string) (FailedJob, bool, bool, error) {
	ps, phys := s.partitions(queue)
	if ps == nil {
		return FailedJob{}, false, false, nil
	}
	for _, name := range ps.Names() {
		j, found, err := phys.Get(ctx, name, id)
		if err != nil || found {
			j.Queue = queue
			return j, found, true, err
		}
	}
	return FailedJob{}, false, true, nil
}

func (s *FailedStore) retryPartitioned(ctx context.Context, queue string, ids []string) ([]string, bool, error) {
	ps, phys := s.partitions(queue)
	if ps == nil {
		return nil, false, nil
	}
	var done []string
	left := ids
	for _, name := range ps.Names() {
		if len(left) == 0 {
			break
		}
		got, err := phys.Retry(ctx, name, left...)
		done = append(done, got...)
		if err != nil {
			return done, true, err
		}
		left = slices.DeleteFunc(slices.Clone(left), func(id string) bool { return slices.Contains(got, id) })
	}
	return done, true, nil
}

// queueNames returns the physical queues of queue: its partitions, or
// queue alone.
func (e *Engine) queueNames(queue string) []string {
	if ps := e.partitionsOf(queue); ps != nil {
		return ps.Names()
	}
	return []string{queue}
}
