package runtime

import "github.com/jobgen/jobgen/internal/queueorder"

// queues returns the worker's queues, in priority order (or drawn by
// WorkerConfig.Weights), without those in quarantine
// (internal/queueorder); all of them if every one is, so that a worker
// never waits on nothing.
func (w *Worker) queues() []string {
	if w.cfg.Weights != nil {
		return queueorder.Weighted(w.healthyQueues(), w.cfg.Weights)
	}
	return w.healthyQueues()
}

// healthyQueues returns the worker's queues but those in quarantine, in
// their order.
func (w *Worker) healthyQueues() []string { return w.sick.Healthy(w.cfg.Queues) }

// noteReserve records how a reserve from queue went: a WRONGTYPE error
// puts the queue in quarantine, and says so (true) for the caller to go
// on with the next queue; a success takes it out, if it was in.
func (w *Worker) noteReserve(queue string, err error) (quarantined bool) {
	return w.sick.Note(queue, err, w.log)
}
