package dashboard

import "github.com/jobgen/jobgen/runtime"

// batchState is the word the pages show for a batch's state: cancelled,
// finished (every job succeeded), "done, some failed" (no job left to
// run, some failed for good: a retry may yet finish it), or running.
func batchState(b runtime.BatchStatus) string {
	switch {
	case b.Cancelled():
		return "cancelled"
	case b.Finished():
		return "finished"
	case b.Failed > 0 && b.Pending <= b.Failed:
		return "done, some failed"
	default:
		return "running"
	}
}

// batchBadge is the badge class of a batch's state.
func batchBadge(b runtime.BatchStatus) string {
	switch batchState(b) {
	case "cancelled":
		return "warn"
	case "finished":
		return "ok"
	case "done, some failed":
		return "bad"
	}
	return ""
}
