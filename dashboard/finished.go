package dashboard

import (
	"context"
	"net/http"
	"strings"

	"github.com/jobgen/jobgen/runtime"
)

// The completed-jobs and metrics pages read the record of finished jobs
// and the runtime histograms that queues with
// runtime.EngineConfig.KeepFinished keep (docs/results.md).

// completedPage is the size of a page of completed jobs.
const completedPage = 50

// completed lists the finished jobs of one queue, newest first, or those
// carrying a tag, or one by ID.
func (h *handler) completed(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	queue, tag, id := q.Get("queue"), strings.TrimSpace(q.Get("tag")), strings.TrimSpace(q.Get("id"))
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if queue == "" && len(queues) > 0 {
		if queue, err = h.firstKeeping(r.Context(), queues); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
	}
	data := map[string]any{"Queue": queue, "Queues": queues, "Tag": tag, "ID": id}
	if queue == "" {
		h.render(w, r, "completed", "Completed", data, true)
		return
	}
	if err := runtime.ValidateQueueName(queue); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	page := pageOf(r)
	jobs, total, err := h.ins.FinishedJobs(ctx, queue, runtime.FinishedQuery{ID: id, Tag: tag, Offset: (page - 1) * completedPage, Limit: completedPage})
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if tag == "" && id == "" && !isLive(r) && pastLastPage(w, r, completedPage, total) {
		return
	}
	data["Jobs"], data["Total"] = jobs, total
	if tag == "" && id == "" {
		data["Pager"] = newPager(r, completedPage, total)
	}
	// Nothing on the page is live: a refresh would fetch it all again.
	h.render(w, r, "completed", "Completed", data, true)
}

// firstKeeping is the first queue, by name, whose record of finished
// jobs holds any, or the first queue if none does.
func (h *handler) firstKeeping(ctx context.Context, queues []string) (string, error) {
	for _, q := range queues {
		_, n, err := h.ins.FinishedJobs(ctx, q, runtime.FinishedQuery{Limit: 1})
		if err != nil {
			return "", err
		}
		if n > 0 {
			return q, nil
		}
	}
	return queues[0], nil
}

// findFinished looks for job id in the records of finished jobs of
// queues; ok is false if none keeps it.
func (h *handler) findFinished(ctx context.Context, queues []string, id string) (runtime.FinishedJob, bool, error) {
	for _, q := range queues {
		jobs, _, err := h.ins.FinishedJobs(ctx, q, runtime.FinishedQuery{ID: id, Limit: 1})
		if err != nil {
			return runtime.FinishedJob{}, false, err
		}
		if len(jobs) > 0 {
			return jobs[0], true, nil
		}
	}
	return runtime.FinishedJob{}, false, nil
}

// metricsRow is one job class of one queue on the metrics page.
type metricsRow struct {
	Queue string
	Parts string // the partitions of Queue it adds up, "" for all (queueParts.Label)
	runtime.JobClassMetrics
}

// metrics shows each job class's runtime percentiles and throughput over
// the last hour and day, for one queue or for all.
func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	queue := r.URL.Query().Get("queue")
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	// The page reads a window of metricsQueues partitions (a queue of
	// none counts as one), across queues or of the one it names: a
	// queue's row adds up the partitions of it read, which the window
	// names.
	if queue != "" {
		if err := runtime.ValidateQueueName(queue); err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
	}
	read := queues
	if queue != "" {
		read = []string{queue}
	}
	from, win := partitionWindow(r, read, h.ins.QueuePartitions, metricsQueues)
	var rows []metricsRow
	for _, fq := range from {
		ms, err := h.ins.JobMetricsOfPartitions(ctx, fq.Queue, fq.Parts)
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		for _, m := range ms {
			rows = append(rows, metricsRow{Queue: fq.Queue, Parts: fq.Label(), JobClassMetrics: m})
		}
	}
	h.render(w, r, "metrics", "Metrics", map[string]any{"Queue": queue, "Queues": queues, "Rows": rows, "Window": win}, true)
}
