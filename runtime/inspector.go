package runtime

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
