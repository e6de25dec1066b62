package runtime

import (
	"context"
	"fmt"
	"slices"
)

// Inspector reads and changes an engine's queues for operators' tools:
// sizes and states, the jobs in each state, paused queues, the failed
// store, batches, the worker registry and per-minute counts, clearing a
// queue and restarting workers. The console's queue commands and the
// dashboard are built on it (asynq's Inspector, Horizon's pages).
//
// An Inspector is a view of its engine: it holds nothing of its own, is
// safe for concurrent use, and is as cheap to make as to keep.
type Inspector struct {
	e *Engine
}

// NewInspector returns the inspector of e's queues.
func NewInspector(e *Engine) *Inspector { return &Inspector{e: e} }

// inspector is NewInspector, for the engine's own use.
func (e *Engine) inspector() *Inspector { return &Inspector{e: e} }

// PauseQueue stops workers from reserving jobs of queue until ResumeQueue.
func (i *Inspector) PauseQueue(ctx context.Context, queue string) error {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return err
	}
	if _, ok, err := e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return 0, pe.inspector().PauseQueue(ctx, p) }); ok {
		return err
	}
	return e.store.SetFlag(ctx, e.keys.Queue(queue).Paused, true)
}

// ResumeQueue undoes PauseQueue, and wakes a waiting worker.
func (i *Inspector) ResumeQueue(ctx context.Context, queue string) error {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return err
	}
	if _, ok, err := e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return 0, pe.inspector().ResumeQueue(ctx, p) }); ok {
		return err
	}
	if err := e.store.SetFlag(ctx, e.keys.Queue(queue).Paused, false); err != nil {
		return err
	}
	return e.ring(ctx, queue)
}

// RestartWorkers asks every worker under this prefix to finish its running jobs
// and exit, so that a supervisor starts it again on new code (Laravel's
// queue:restart). A note on the notes channel tells the workers at
// once (worker_notify.go), so each stops taking jobs within a round trip,
// then lets its running jobs finish within its Grace; a worker that
// missed the note finds the broadcast within restartPoll (5 s).
//
// The broadcast is the Redis time, in unix ms, stored under one key, and
// a worker stops for a value later than the one it read at its start: a
// key that vanishes (a Redis restarted without persistence, a flush) or
// goes back in time (a restore) stops no worker.
func (i *Inspector) RestartWorkers(ctx context.Context) error {
	if err := i.e.store.Advance(ctx, i.e.keys.Restart()); err != nil {
		return err
	}
	return i.e.tellRestart(ctx)
}

// QueuePaused reports whether queue is paused.
func (i *Inspector) QueuePaused(ctx context.Context, queue string) (bool, error) {
	e := i.e
	if paused, ok, err := e.pausedPartitioned(ctx, queue); ok {
		return paused, err
	}
	return e.store.Exists(ctx, e.keys.Queue(queue).Paused)
}

// Sizes returns how many jobs of queue are in each state, counted in one
// script call, so the four counts are one snapshot. It only reads, so it
// works when Redis is past maxmemory.
func (i *Inspector) Sizes(ctx context.Context, queue string) (Sizes, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return Sizes{}, err
	}
	if s, ok, err := e.sizesPartitioned(ctx, queue); ok {
		return s, err
	}
	v, err := e.store.Sizes(ctx, queue)
	if err != nil {
		return Sizes{}, fmt.Errorf("sizes of %q: %w", queue, err)
	}
	err = e.movedFailedCounts(ctx, []string{queue}, func(_ int, n int64) { v.Failed = n })
	return Sizes{Ready: v.Ready, Delayed: v.Delayed, Reserved: v.Reserved, Failed: v.Failed}, err
}

// ClearQueue deletes every ready, delayed and reserved job of queue and returns
// how many there were. Failed jobs and the paused flag are kept. Workers
// holding a cleared job get ErrLeaseLost when they ack it.
func (i *Inspector) ClearQueue(ctx context.Context, queue string) (int64, error) {
	e := i.e
	if err := validateQueueOrPartition(queue); err != nil {
		return 0, err
	}
	if n, ok, err := e.eachPartition(queue, func(pe *Engine, p string) (int64, error) { return pe.inspector().ClearQueue(ctx, p) }); ok {
		return n, err
	}
	n, err := e.store.Clear(ctx, queue)
	if err != nil {
		return 0, fmt.Errorf("clear %q: %w", queue, err)
	}
	return n, nil
}

// Queues lists, sorted, every queue that has been pushed to under this
// engine's prefix.
func (i *Inspector) Queues(ctx context.Context) ([]string, error) {
	e := i.e
	qs, err := e.store.Members(ctx, e.keys.Queues())
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	slices.Sort(qs)
	return qs, nil
}

// States reads the sizes and paused flag of every queue of queues, in
// one pipeline of one script call per queue (per partition of a
// partitioned queue): one round trip, whatever the number of queues,
// and no scan of keys. It is meant for a metrics collector that reads
// every queue at each scrape.
func (i *Inspector) States(ctx context.Context, queues []string) (map[string]QueueState, error) {
	e := i.e
	var logical, names []string // the queue and the partition of each call
	for _, q := range queues {
		if err := validateQueueOrPartition(q); err != nil {
			return nil, err
		}
		parts := []string{q}
		if ps := e.partitionsOf(q); ps != nil {
			parts = ps.Names()
		}
		for _, name := range parts {
			logical, names = append(logical, q), append(names, name)
		}
	}
	out := make(map[string]QueueState, len(queues))
	if len(names) == 0 {
		return out, nil
	}
	sizes, at, err := e.store.SizesOf(ctx, names)
	switch {
	case err != nil && at < 0:
		return nil, fmt.Errorf("queue states: %w", err)
	case err != nil:
		return nil, fmt.Errorf("queue states of %q: %w", names[at], err)
	}
	if err := e.movedFailedCounts(ctx, names, func(i int, n int64) { sizes[i].Failed = n }); err != nil {
		return nil, err
	}
	for i, v := range sizes {
		s := out[logical[i]]
		s.Ready += v.Ready
		s.Delayed += v.Delayed
		s.Reserved += v.Reserved
		s.Failed += v.Failed
		s.Paused = s.Paused || v.Paused
		s.Grouped += v.Grouped
		out[logical[i]] = s
	}
	return out, nil
}

// Failed returns the failed-job store of this engine.
func (i *Inspector) Failed() *FailedStore { return &FailedStore{e: i.e} }

// FailedStore keeps failed jobs per queue: in Redis, every one unless
// EngineConfig.FailedMaxCount or FailedMaxAge bounds it, or in the
// engine's EngineConfig.FailedStore (a PostgreSQL table). It lists,
// retries, forgets and prunes them: Laravel's queue:failed, queue:retry,
// queue:forget, queue:flush and queue:prune-failed.
type FailedStore struct {
	e *Engine
	// redis is true for the store in Redis, whatever the engine's
	// FailedStore (failed_backend.go).
	redis bool
}

// Batches returns the engine's batch store.
func (i *Inspector) Batches() *BatchStore { return &BatchStore{e: i.e} }

// BatchStore reads and changes the batches of an engine: Laravel's
// Bus::findBatch, $batch->cancel(), $batch->add() and queue:retry-batch.
type BatchStore struct {
	e *Engine
}
