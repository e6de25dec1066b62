package runtime

import "os"

// logStopSignal says, as a stop signal arrives, what the worker does
// next: it takes no new job, lets the jobs it runs finish for up to
// Grace, then hands back those still running. (The worker logs again
// when it has stopped.)
func (w *Worker) logStopSignal(s os.Signal) {
	w.log.Info("stop signal received: taking no new jobs; running jobs may finish within the grace period, then those still running go back to their queues",
		"signal", signalName(s), "running", w.running(), "grace", w.cfg.Grace)
}
