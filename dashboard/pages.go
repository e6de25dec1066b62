package dashboard

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// queueRow is one queue on the overview.
type queueRow struct {
	Name   string
	Sizes  runtime.Sizes
	Paused bool
	// Parts is "partitions 1–8 of 16" when the row is of some partitions
	// of a partitioned queue only (the window has the others); "" when
	// it is of the whole queue.
	Parts string
	// OldestAt is when the next job to be taken was dispatched; HasWait
	// is false when none is ready. WaitAtLeast is true when not every
	// fair group's head was read (more than 1,000 jobs wait in groups):
	// the queue's longest wait is at least since OldestAt.
	OldestAt    time.Time
	HasWait     bool
	WaitAtLeast bool
	// Processed and Failed in the last hour.
	Processed, Failed int64
	// Hold is what is left of the queue's hold (runtime.HoldQueue); 0
	// if none is on. HoldUntil is when it ends, to the second.
	Hold      time.Duration
	HoldUntil time.Time
}

// queueRows reads the state of the queues of the window, each of the
// partitions it reads: their sizes, paused flags and holds in a pipeline
// each, then the pickup wait of each partition, a few at a time. A
// partition costs what a queue does.
func (h *handler) queueRows(ctx context.Context, window []queueParts, counts []runtime.MinuteCount, now time.Time) ([]queueRow, error) {
	ins := h.ins.PerPartition()
	var names []string
	for _, q := range window {
		names = append(names, q.Parts...)
	}
	states, err := ins.States(ctx, names)
	if err != nil {
		return nil, err
	}
	holds, err := ins.QueueHolds(ctx, names)
	if err != nil {
		return nil, err
	}
	hourAgo := now.Add(-time.Hour)
	rows := make([]queueRow, len(window))
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, q := range window {
		row := &rows[i]
		*row = queueRow{Name: q.Queue, Parts: q.Label()}
		for _, p := range q.Parts {
			st := states[p]
			row.Sizes.Ready += st.Ready
			row.Sizes.Delayed += st.Delayed
			row.Sizes.Reserved += st.Reserved
			row.Sizes.Failed += st.Failed
			row.Paused = row.Paused || st.Paused
			row.Hold = max(row.Hold, holds[p])
			if st.Ready == 0 {
				continue // nothing waits: no wait to read
			}
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				at, ok, atLeast, err := h.oldestWaiting(ctx, ins, p, st)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				if ok && (!row.HasWait || at.Before(row.OldestAt)) {
					row.OldestAt, row.HasWait = at, true
				}
				row.WaitAtLeast = row.WaitAtLeast || atLeast
			})
		}
		row.HoldUntil = holdUntil(row.Hold)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range rows {
		for _, c := range counts {
			if c.Queue == rows[i].Name && !c.Minute.Before(hourAgo) {
				rows[i].Processed += c.Processed
				rows[i].Failed += c.Failed
			}
		}
	}
	return rows, nil
}

// holdUntil is when a hold with left to run ends, to the second, so
// that a page shows the same end at each refresh; zero for no hold.
func holdUntil(left time.Duration) time.Time {
	if left <= 0 {
		return time.Time{}
	}
	return time.Now().Add(left).Round(time.Second)
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	now := h.now()
	counts, err := h.ins.Metrics(ctx, now.Add(-24*time.Hour))
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	names, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	// The cards of sizes and wait add up the queues the page reads: all
	// of them up to overviewQueues partitions, and then those of its
	// window, which the cards name.
	window, win := partitionWindow(r, names, h.ins.QueuePartitions, overviewQueues)
	rows, err := h.queueRows(ctx, window, counts, now)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	workers, err := h.ins.Workers(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	var total runtime.Sizes
	var oldest time.Time
	waiting, atLeast := false, false
	busy, slots := 0, 0
	for _, q := range rows {
		total.Ready += q.Sizes.Ready
		total.Delayed += q.Sizes.Delayed
		total.Reserved += q.Sizes.Reserved
		total.Failed += q.Sizes.Failed
		if q.HasWait && (!waiting || q.OldestAt.Before(oldest)) {
			oldest, waiting = q.OldestAt, true
		}
		atLeast = atLeast || q.WaitAtLeast
	}
	for _, wk := range workers {
		busy += len(wk.Running)
		slots += wk.Concurrency
	}
	outbox, hasOutbox, err := h.ins.Outbox(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	health, err := h.outboxHealth(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h.render(w, r, "overview", "Overview", map[string]any{
		"Outbox":    outbox,
		"HasOutbox": hasOutbox,
		"Health":    health,
		"Queues":    rows,
		"Total":     total,
		"OldestAt":  oldest,
		"Waiting":   waiting,
		"AtLeast":   atLeast,
		"Workers":   len(workers),
		"Busy":      busy,
		"Slots":     slots,
		"Window":    win,
		"Hour":      newSeries(counts, "", 60, 1, now, "last hour"),
		"Day":       newSeries(counts, "", 96, 15, now, "last day"),
	}, false)
}

func (h *handler) workers(w http.ResponseWriter, r *http.Request) {
	ws, err := h.ins.Workers(r.Context())
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h.render(w, r, "workers", "Workers", map[string]any{"Workers": ws}, false)
}

// states a queue page lists.
var listStates = []runtime.JobState{runtime.StateReady, runtime.StateDelayed, runtime.StateReserved}

func (h *handler) queue(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.PathValue("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	state := runtime.JobState(r.URL.Query().Get("state"))
	if !slices.Contains(listStates, state) {
		state = runtime.StateReady
	}
	size := h.opts.PageSize
	page := pageOf(r)
	var jobs []runtime.QueuedJob
	var jobGroups []string
	var total int64
	var err error
	if !isLive(r) { // a live refresh swaps the numbers, not the list
		if jobs, jobGroups, total, err = h.listJobs(ctx, q, state, (page-1)*size, size); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		if pastLastPage(w, r, size, total) {
			return
		}
	}
	sizes, err := h.ins.Sizes(ctx, q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	paused, err := h.ins.QueuePaused(ctx, q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	limits, err := h.ins.QueueLimits(ctx, q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	hold, err := h.queueHold(ctx, q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	groups, err := h.ins.Groups(ctx, q, 10)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	now := time.Now()
	counts, err := h.ins.Metrics(ctx, now.Add(-time.Hour))
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	views := make([]jobView, len(jobs))
	for i, j := range jobs {
		views[i] = readJob(j.Queue, j.ID, j.State, j.Payload)
		views[i].Attempts, views[i].Exceptions, views[i].Due, views[i].Group = j.Attempts, j.Exceptions, j.Due, jobGroups[i]
	}
	if state == runtime.StateReserved {
		h.markWorkers(ctx, views)
	}
	h.render(w, r, "queue", "Queue "+q, map[string]any{
		"Queue": q, "State": string(state), "States": listStates, "Sizes": sizes, "Paused": paused, "Hold": hold, "HoldUntil": holdUntil(hold),
		"Limits": limits, "Groups": groups,
		"Jobs": views, "Pager": newPager(r, size, total), "Hour": newSeries(counts, q, 60, 1, now, "last hour"),
	}, false)
}

// markWorkers fills in the worker running each job, where one does.
func (h *handler) markWorkers(ctx context.Context, views []jobView) {
	ws, err := h.ins.Workers(ctx)
	if err != nil {
		return
	}
	by := map[string]string{}
	for _, wk := range ws {
		for _, j := range wk.Running {
			by[j.Queue+"\x00"+j.ID] = wk.Name + " (" + wk.Host + ")"
		}
	}
	for i := range views {
		views[i].Worker = by[views[i].Queue+"\x00"+views[i].ID]
	}
}

func (h *handler) confirmClear(w http.ResponseWriter, r *http.Request) {
	if h.readOnly(w, r) {
		return
	}
	q := r.PathValue("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	s, err := h.ins.Sizes(r.Context(), q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h.render(w, r, "confirm", "Clear "+q, map[string]any{
		"Question": "Delete every pending job of queue " + q + "?",
		"Detail":   num(s.Total()) + " jobs (ready, delayed and reserved) will be deleted. Failed jobs are kept.",
		"Action":   "queues/" + url.PathEscape(q) + "/clear", "Button": "Clear " + q,
		"Back": "queues/" + url.PathEscape(q),
	}, true)
}

// confirmCancel asks before a job is cancelled: the form names the
// attempt the job page showed, so that a job reserved again since is
// left alone.
func (h *handler) confirmCancel(w http.ResponseWriter, r *http.Request) {
	if h.readOnly(w, r) {
		return
	}
	id, q, attempt := r.PathValue("id"), r.URL.Query().Get("queue"), r.URL.Query().Get("attempt")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if _, err := strconv.Atoi(attempt); err != nil {
		h.failf(w, r, http.StatusBadRequest, "bad attempt %q", attempt)
		return
	}
	back := "jobs/" + url.PathEscape(id) + "?queue=" + url.QueryEscape(q)
	h.render(w, r, "confirm", "Cancel job "+id, map[string]any{
		"Question": "Cancel job " + id + " of queue " + q + "?",
		"Detail": "If it is still at attempt " + attempt + ", it leaves its queue and goes to the failed store, marked cancelled, and is not tried again; " +
			"if it is running, its worker is told to stop it at once. Its batch counts it as failed and its chain goes no further.",
		"Action": "jobs/" + url.PathEscape(id) + "/cancel", "Button": "Cancel job",
		"Queue": q, "Hidden": map[string]string{"attempt": attempt}, "Back": back,
	}, true)
}

func (h *handler) confirmFlush(w http.ResponseWriter, r *http.Request) {
	if h.readOnly(w, r) {
		return
	}
	q := r.URL.Query().Get("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	n, err := h.ins.Failed().Count(r.Context(), q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h.render(w, r, "confirm", "Flush "+q, map[string]any{
		"Question": "Delete every failed job of queue " + q + "?",
		"Detail":   num(n) + " failed jobs will be deleted for good.",
		"Action":   "failed/flush", "Button": "Flush " + q, "Queue": q,
		"Back": "failed?queue=" + url.QueryEscape(q),
	}, true)
}

// failedView is a failed job on the failed page.
type failedView struct {
	jobView
	Ref string // form value for bulk actions
}

// scanLimit is the most jobs per queue and state a search or a filtered
// list reads.
const scanLimit = 1000

func (h *handler) failed(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	queue, name, tag := q.Get("queue"), strings.TrimSpace(q.Get("name")), strings.TrimSpace(q.Get("tag"))
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	// Across queues, the list reads a window of failedQueues of them.
	from, win := windowOf(r, queues, failedQueues)
	if queue != "" {
		if err := runtime.ValidateQueueName(queue); err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
		from, win = []string{queue}, queueWindow{}
	}
	size, page := h.opts.PageSize, pageOf(r)
	filtered := name != "" || tag != ""
	want := page * size
	if filtered {
		want = scanLimit
	}
	var all []failedView
	var total int64
	counts := map[string]int64{}
	for _, fq := range from {
		n, err := h.ins.Failed().Count(ctx, fq)
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		counts[fq] = n
		total += n
	}
	// Unfiltered, a page past the last is known before any job is read.
	if !isLive(r) && !filtered && pastLastPage(w, r, size, total) {
		return
	}
	budget := h.newScanBudget()
	stoppedAt := ""
	for _, fq := range from {
		if counts[fq] == 0 || (isLive(r) && !filtered) { // a live refresh swaps the count, not the list
			continue
		}
		if filtered && budget.spent() {
			stoppedAt = fq
			break
		}
		jobs, err := h.ins.Failed().List(ctx, fq, 0, want)
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		for _, j := range jobs {
			budget.bytes += len(j.Payload)
			v := readJobHead(j.Queue, j.ID, runtime.StateFailed, j.Payload)
			if v.Name == "" {
				v.Name = j.Name
			}
			v.Attempts, v.Error, v.FailedAt, v.Cancelled = j.Attempts, j.Error, j.FailedAt, j.Cancelled
			if filtered && !v.matches(name, tag) {
				continue
			}
			all = append(all, failedView{jobView: v, Ref: jobRef(j.Queue, j.ID)})
		}
	}
	slices.SortStableFunc(all, func(a, b failedView) int { return b.FailedAt.Compare(a.FailedAt) })
	if filtered {
		total = int64(len(all))
	}
	if !isLive(r) && pastLastPage(w, r, size, total) {
		return
	}
	lo := min((page-1)*size, len(all))
	hi := min(lo+size, len(all))
	for i := lo; i < hi; i++ {
		all[i].readBody(listPreview)
	}
	h.render(w, r, "failed", "Failed jobs", map[string]any{
		"Queue": queue, "Name": name, "Tag": tag, "Queues": queues, "Counts": counts,
		"Jobs": all[lo:hi], "Pager": newPager(r, size, total), "Filtered": filtered, "StoppedAt": stoppedAt,
		"Window": win,
	}, false)
}

// findJob sends the job-ID form to the job's page.
func (h *handler) findJob(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		redirect(w, r, "search")
		return
	}
	path := "jobs/" + url.PathEscape(id)
	if q := r.URL.Query().Get("queue"); q != "" {
		path += "?queue=" + url.QueryEscape(q)
	}
	seeOther(w, base(r)+path)
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	queues := []string{r.URL.Query().Get("queue")}
	if queues[0] == "" {
		var err error
		if queues, err = h.ins.Queues(ctx); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
	}
	for _, q := range queues {
		if err := runtime.ValidateQueueName(q); err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
		j, ok, err := h.ins.FindJob(ctx, q, id)
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		if !ok {
			continue
		}
		v := readJobHead(j.Queue, j.ID, j.State, j.Payload)
		if !isLive(r) { // a live refresh swaps the facts, not the payload
			v.readBody(previewLimit)
		}
		v.Attempts, v.Exceptions, v.Due = j.Attempts, j.Exceptions, j.Due
		v.Errors, v.Progress = j.Errors, j.Progress
		if j.State == runtime.StateFailed {
			f, ok, err := h.ins.Failed().Get(ctx, q, id)
			if err != nil {
				h.fail(w, r, http.StatusBadGateway, err)
				return
			}
			if ok {
				v.Attempts, v.Error, v.FailedAt, v.Cancelled, v.Errors = f.Attempts, f.Error, f.FailedAt, f.Cancelled, f.Errors
				if v.Name == "" {
					v.Name = f.Name
				}
			}
		}
		var started time.Time
		if j.State == runtime.StateReserved {
			started = h.runningOn(ctx, &v)
		}
		h.render(w, r, "job", "Job "+id, map[string]any{"Job": v, "Found": true, "Ref": jobRef(v.Queue, v.ID), "Timeline": timeline(v, started)}, false)
		return
	}
	f, ok, err := h.findFinished(ctx, queues, id)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if ok {
		v := jobView{Queue: f.Queue, ID: f.ID, State: "finished", Name: f.Name, Attempts: f.Attempts, Tags: f.Tags,
			Worker: f.Worker, FinishedAt: f.FinishedAt, Runtime: f.Runtime, ResultSize: f.ResultSize, Finished: true,
			Errors: f.AttemptErrors}
		res, err := h.jobResult(ctx, f.Queue, id)
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		h.render(w, r, "job", "Job "+id, map[string]any{"Job": v, "Found": true, "Result": res, "Timeline": timeline(v, f.StartedAt)}, true)
		return
	}
	if len(queues) == 1 && queues[0] != "" { // a job no longer kept may have left its result
		q := queues[0]
		res, err := h.jobResult(ctx, q, id)
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		if res != nil {
			v := jobView{Queue: q, ID: id, State: "finished", Finished: true}
			h.render(w, r, "job", "Job "+id, map[string]any{"Job": v, "Found": true, "Result": res, "Gone": true}, true)
			return
		}
	}
	h.renderStatus(w, r, http.StatusNotFound, "job", "Job "+id, map[string]any{"Found": false, "ID": id}, true)
}

// search finds jobs by name, tag and queue among the first jobs of each
// queue's ready, delayed, reserved and failed lists.
func (h *handler) search(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	name, tag, queue := strings.TrimSpace(q.Get("name")), strings.TrimSpace(q.Get("tag")), q.Get("queue")
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	data := map[string]any{"Name": name, "Tag": tag, "Queue": queue, "Queues": queues, "ScanLimit": scanLimit}
	if name == "" && tag == "" && queue == "" {
		h.render(w, r, "search", "Search", data, true)
		return
	}
	// A search reads a window of searchQueues partitions (a queue of none
	// counts as one), across queues or of the one it names.
	if queue != "" {
		if err := runtime.ValidateQueueName(queue); err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
		queues = []string{queue}
	}
	from, win := partitionWindow(r, queues, h.ins.QueuePartitions, searchQueues)
	data["Window"] = win
	ins := h.ins.PerPartition()
	var found []jobView
	budget := h.newScanBudget()
scan:
	for _, fq := range from {
		for _, part := range fq.Parts {
			if budget.spent() {
				data["StoppedAt"] = part
				break scan
			}
			for _, st := range listStates {
				jobs, groups, _, err := listJobsOf(ctx, ins, part, st, 0, scanLimit)
				if err != nil {
					h.fail(w, r, http.StatusBadGateway, err)
					return
				}
				for k, j := range jobs {
					budget.bytes += len(j.Payload)
					v := readJobHead(j.Queue, j.ID, j.State, j.Payload)
					v.Attempts, v.Due, v.Group = j.Attempts, j.Due, groups[k]
					if v.matches(name, tag) {
						found = append(found, v)
					}
				}
			}
			failed, err := ins.Failed().List(ctx, part, 0, scanLimit)
			if err != nil {
				h.fail(w, r, http.StatusBadGateway, err)
				return
			}
			for _, j := range failed {
				budget.bytes += len(j.Payload)
				v := readJobHead(j.Queue, j.ID, runtime.StateFailed, j.Payload)
				v.Attempts, v.Error, v.FailedAt = j.Attempts, j.Error, j.FailedAt
				if v.matches(name, tag) {
					found = append(found, v)
				}
			}
		}
	}
	slices.SortStableFunc(found, func(a, b jobView) int { return cmp.Compare(a.Queue, b.Queue) })
	size := h.opts.PageSize
	if pastLastPage(w, r, size, int64(len(found))) {
		return
	}
	lo, hi := min((pageOf(r)-1)*size, len(found)), min((pageOf(r)-1)*size+size, len(found))
	for i := lo; i < hi; i++ {
		found[i].readBody(listPreview)
	}
	data["Jobs"] = found[lo:hi]
	data["Found"] = len(found)
	data["Pager"] = newPager(r, size, int64(len(found)))
	data["Searched"] = true
	h.render(w, r, "search", "Search", data, true)
}

// scanBudget bounds a search across queues by what it has read: past
// scanBytes of payloads, or scanTime, it reads no further queue, so that
// queues of big payloads give a partial answer that says so rather than
// none in time.
type scanBudget struct {
	started time.Time
	bytes   int
	limit   int // scanBytes, or a test's
}

// newScanBudget starts a scan's budget.
func (h *handler) newScanBudget() scanBudget {
	limit := scanBytes
	if n := h.scanBytes.Load(); n > 0 {
		limit = int(n)
	}
	return scanBudget{started: time.Now(), limit: limit}
}

const (
	scanBytes = 32 << 20
	scanTime  = 500 * time.Millisecond
)

func (b scanBudget) spent() bool {
	return b.bytes > b.limit || time.Since(b.started) > scanTime
}

// batchScan is how many jobs per queue and state the batches page reads
// to find the batches that have jobs waiting or failed.
const batchScan = 200

// batchRow is a batch on the batches page.
type batchRow struct {
	runtime.BatchStatus
	Succeeded, Percent int
}

func (h *handler) findBatch(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		total, err := h.ins.Batches().Count(r.Context())
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		if pastLastPage(w, r, batchList, total) {
			return
		}
		if r.URL.Query().Get("older") == "1" {
			h.findOlderBatches(w, r)
			return
		}
		rows, err := h.openBatches(r.Context(), pageOf(r))
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		pg := newPager(r, batchList, total)
		pg.What = "batches"
		h.render(w, r, "batch", "Batches", map[string]any{"Ask": true, "Batches": rows, "Scan": batchScan, "List": batchList,
			"Pager": pg, "First": pageOf(r) == 1, "Window": queueWindow{}}, false)
		return
	}
	seeOther(w, base(r)+"batches/"+url.PathEscape(id))
}

// findOlderBatches is the batches page's look for older batches, in a
// window of batchQueues partitions (a queue of none counts as one).
func (h *handler) findOlderBatches(w http.ResponseWriter, r *http.Request) {
	queues, err := h.ins.Queues(r.Context())
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	these, win := partitionWindow(r, queues, h.ins.QueuePartitions, batchQueues)
	rows, stoppedAt, more, err := h.olderBatches(r.Context(), these)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h.render(w, r, "batch", "Batches", map[string]any{"Ask": true, "Batches": rows, "Scan": batchScan, "List": batchList,
		"Older": true, "Window": win, "StoppedAt": stoppedAt, "More": more, "Found": batchFound}, false)
}

func (h *handler) batch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st, ok, err := h.ins.Batches().Find(r.Context(), id)
	switch {
	case errors.Is(err, runtime.ErrInvalid):
		h.fail(w, r, http.StatusBadRequest, err)
		return
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, err)
		return
	case !ok:
		h.renderStatus(w, r, http.StatusNotFound, "batch", "Batch "+id, map[string]any{"Ask": true, "Missing": id, "Scan": batchScan, "List": batchList}, true)
		return
	}
	// A failed job stays pending: it may yet succeed on a retry.
	succeeded := st.Total - st.Pending
	h.render(w, r, "batch", "Batch "+id, map[string]any{
		"Batch": st, "Succeeded": succeeded, "Waiting": max(st.Pending-st.Failed, 0),
		"Percent": percent(succeeded+st.Failed, st.Total),
	}, false)
}

func percent(part, whole int) int {
	if whole <= 0 {
		return 100
	}
	return part * 100 / whole
}

// batchList is how many batches a page of the batches page lists: each
// costs two reads (BatchStore.List).
const batchList = 40

// openBatches returns a page of the batches, newest first, from their
// index (BatchStore.List).
func (h *handler) openBatches(ctx context.Context, page int) ([]batchRow, error) {
	newest, err := h.ins.Batches().List(ctx, (page-1)*batchList, batchList)
	if err != nil {
		return nil, err
	}
	rows := make([]batchRow, 0, len(newest))
	for _, st := range newest {
		rows = append(rows, newBatchRow(st))
	}
	return rows, nil
}

func newBatchRow(st runtime.BatchStatus) batchRow {
	ok := st.Total - st.Pending
	return batchRow{BatchStatus: st, Succeeded: ok, Percent: percent(ok+st.Failed, st.Total)}
}

// batchFound is the most batches the look for older batches reads a
// request: each costs two reads (BatchStore.Find).
const batchFound = 20

// olderBatches is the look for older batches, those the index no longer
// holds that still have work: the batches that jobs near the head of
// the queues of a window, or among their newest failed jobs, belong to,
// newest first, at most batchFound of them. It reads the payloads of up
// to batchScan jobs of each list of each partition of the window, so the
// page does it only when asked. more is how many more batches those
// jobs belong to.
func (h *handler) olderBatches(ctx context.Context, queues []queueParts) (rows []batchRow, stoppedAt string, more int, err error) {
	var ids []string
	seen := map[string]bool{}
	note := func(queue, id string, state runtime.JobState, payload []byte) {
		if v := readJobHead(queue, id, state, payload); v.BatchID != "" && !seen[v.BatchID] {
			seen[v.BatchID] = true
			ids = append(ids, v.BatchID)
		}
	}
	ins := h.ins.PerPartition()
	budget := h.newScanBudget()
scan:
	for _, q := range queues {
		for _, part := range q.Parts {
			if budget.spent() {
				stoppedAt = part
				break scan
			}
			for _, st := range listStates {
				jobs, _, _, err := listJobsOf(ctx, ins, part, st, 0, batchScan)
				if err != nil {
					return nil, "", 0, err
				}
				for _, j := range jobs {
					budget.bytes += len(j.Payload)
					note(q.Queue, j.ID, st, j.Payload)
				}
			}
			failed, err := ins.Failed().List(ctx, part, 0, batchScan)
			if err != nil {
				return nil, "", 0, err
			}
			for _, j := range failed {
				budget.bytes += len(j.Payload)
				note(q.Queue, j.ID, runtime.StateFailed, j.Payload)
			}
		}
	}
	if len(ids) > batchFound {
		ids, more = ids[:batchFound], len(ids)-batchFound
	}
	for _, id := range ids {
		st, ok, err := h.ins.Batches().Find(ctx, id)
		if err != nil {
			return nil, "", 0, err
		}
		if ok {
			rows = append(rows, newBatchRow(st))
		}
	}
	slices.SortFunc(rows, func(a, b batchRow) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return rows, stoppedAt, more, nil
}

// readOnly writes a 403 page for an action's confirmation page when the
// dashboard is read-only, and reports whether it did.
func (h *handler) readOnly(w http.ResponseWriter, r *http.Request) bool {
	if !h.opts.ReadOnly {
		return false
	}
	h.failf(w, r, http.StatusForbidden, "the dashboard is read-only: nothing can be changed from it")
	return true
}
