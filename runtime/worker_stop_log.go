package runtime

import "os"

// logStopSignal says, as a stop signal arrives, what the worker does
// next: it takes no new job, lets the jobs it runs finish for up to
// Grace, then hands back those still running. (The worker logs again
// when it has stopped.)
func (w *Worker) logStopSignal(s os.Signal) {
	running, held := w.runningNow()
	w.log.Info("stop signal received: taking no new jobs; running jobs may finish within the grace period, then those still running go back to their queues",
		"signal", signalName(s), "running", running, "prefetched", held, "grace", w.cfg.Grace)
}

// runningNow counts the jobs the worker runs, and those it holds
// reserved that have not started (prefetched).
func (w *Worker) runningNow() (running, held int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.active {
		if a.run.ID != "" {
			running++
		} else {
			held++
		}
	}
	return running, held
}
