package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Every action is a POST that ServeHTTP let through: same origin, not
// read-only, authorized. Each answers with a redirect to the page to
// look at next (post/redirect/get), so a reload does not repeat it.

// queueParam reads and checks the queue of the path.
func (h *handler) queueParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	q := r.PathValue("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return "", false
	}
	return q, true
}

func (h *handler) pause(w http.ResponseWriter, r *http.Request) {
	if q, ok := h.queueParam(w, r); ok {
		if err := h.ins.PauseQueue(r.Context(), q); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		redirect(w, r, "queues/"+url.PathEscape(q))
	}
}

func (h *handler) resume(w http.ResponseWriter, r *http.Request) {
	if q, ok := h.queueParam(w, r); ok {
		if err := h.ins.ResumeQueue(r.Context(), q); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		redirect(w, r, "queues/"+url.PathEscape(q))
	}
}

func (h *handler) clear(w http.ResponseWriter, r *http.Request) {
	q, ok := h.queueParam(w, r)
	if !ok {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		redirect(w, r, "queues/"+url.PathEscape(q)+"/clear")
		return
	}
	if _, err := h.ins.ClearQueue(r.Context(), q); err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	redirect(w, r, "queues/"+url.PathEscape(q))
}

// setLimits sets a queue's flow limits from its page's form: limit, the
// concurrency limit, and rate per per, the rate; an empty or 0 limit or
// rate removes it.
func (h *handler) setLimits(w http.ResponseWriter, r *http.Request) {
	q, ok := h.queueParam(w, r)
	if !ok {
		return
	}
	count := func(name string) (int, bool) {
		v := strings.TrimSpace(r.PostFormValue(name))
		if v == "" {
			return 0, true
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			h.failf(w, r, http.StatusBadRequest, "%s must be a whole number of jobs, 0 or empty for none; got %q", name, v)
			return 0, false
		}
		return n, true
	}
	limit, ok := count("limit")
	if !ok {
		return
	}
	rate, ok := count("rate")
	if !ok {
		return
	}
	var per time.Duration
	if rate > 0 {
		var err error
		if per, err = time.ParseDuration(strings.TrimSpace(r.PostFormValue("per"))); err != nil {
			h.failf(w, r, http.StatusBadRequest, "the rate's period must be a duration such as 1s or 1m; got %q", r.PostFormValue("per"))
			return
		}
	}
	// The rate first: a bad one is refused before anything changed.
	if err := h.ins.SetQueueRate(r.Context(), q, rate, per); err != nil {
		h.limitError(w, r, err)
		return
	}
	if err := h.ins.SetQueueLimit(r.Context(), q, limit); err != nil {
		h.limitError(w, r, err)
		return
	}
	redirect(w, r, "queues/"+url.PathEscape(q))
}

// limitError answers a refused or failed change of limits.
func (h *handler) limitError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, runtime.ErrInvalid) {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	h.fail(w, r, http.StatusBadGateway, err)
}

// failedAct retries or forgets failed jobs: the one whose button was
// pressed (one = "retry REF" or "forget REF"), or the ones selected
// (job = REF...) with action = retry or forget.
func (h *handler) failedAct(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	action, refs := r.PostForm.Get("action"), r.PostForm["job"]
	if one := r.PostForm.Get("one"); one != "" {
		var ref string
		if _, err := fmt.Sscanf(one, "%s %s", &action, &ref); err != nil {
			h.failf(w, r, http.StatusBadRequest, "bad action %q", one)
			return
		}
		refs = []string{ref}
	}
	byQueue := map[string][]string{}
	var order []string
	for _, ref := range refs {
		v, err := url.ParseQuery(ref)
		if err != nil || v.Get("q") == "" || v.Get("id") == "" {
			h.failf(w, r, http.StatusBadRequest, "bad job reference %q", ref)
			return
		}
		q := v.Get("q")
		if err := runtime.ValidateQueueName(q); err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
		if _, ok := byQueue[q]; !ok {
			order = append(order, q)
		}
		byQueue[q] = append(byQueue[q], v.Get("id"))
	}
	if len(refs) == 0 {
		h.failf(w, r, http.StatusBadRequest, "no job selected")
		return
	}
	for _, q := range order {
		var err error
		switch action {
		case "retry":
			_, err = h.ins.Failed().Retry(r.Context(), q, byQueue[q]...)
		case "forget":
			_, err = h.ins.Failed().Forget(r.Context(), q, byQueue[q]...)
		default:
			h.failf(w, r, http.StatusBadRequest, "unknown action %q", action)
			return
		}
		if err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
	}
	back := r.PostForm.Get("back")
	if back == "" || !safeBack(back) {
		back = "failed"
	}
	redirect(w, r, back)
}

// safeBack reports whether back is a path within the dashboard, as the
// forms send it: relative, no scheme, no host.
func safeBack(back string) bool {
	u, err := url.Parse(back)
	return err == nil && u.Scheme == "" && u.Host == "" && !slices.Contains([]byte(back), '\\') &&
		len(back) > 0 && back[0] != '/' && back[0] != '.'
}

func (h *handler) flush(w http.ResponseWriter, r *http.Request) {
	q := r.PostFormValue("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		redirect(w, r, "failed/flush?queue="+url.QueryEscape(q))
		return
	}
	if err := h.ins.Failed().Flush(r.Context(), q); err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	redirect(w, r, "failed?queue="+url.QueryEscape(q))
}

// retryAll retries every failed job of a queue in the background, a
// chunk at a time, and sends the browser to the task's progress page.
func (h *handler) retryAll(w http.ResponseWriter, r *http.Request) {
	q := r.PostFormValue("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	n, err := h.ins.Failed().Count(r.Context(), q)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	t := h.startTask("Retry the failed jobs of "+q, n, "failed?queue="+url.QueryEscape(q), func(ctx context.Context, t *task) error {
		return retryChunks(ctx, h.ins.Failed(), q, n, t)
	})
	redirect(w, r, "tasks/"+t.ID)
}

// retryChunk is how many failed jobs one step of a retry-all pushes back.
const retryChunk = 500

// retryChunks retries up to n failed jobs of queue, oldest first, in
// chunks, reporting each to t. Jobs that fail again meanwhile are newer
// than those counted and wait for the next retry-all.
func retryChunks(ctx context.Context, s *runtime.FailedStore, queue string, n int64, t *task) error {
	var done int64
	for done < n {
		left, err := s.Count(ctx, queue)
		if err != nil {
			return err
		}
		if left == 0 {
			return nil
		}
		// The oldest jobs are at the end of the newest-first list.
		take := min(int64(retryChunk), n-done, left)
		jobs, err := s.List(ctx, queue, int(max(left-take, 0)), int(take))
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			return nil
		}
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		if _, err := s.Retry(ctx, queue, ids...); err != nil {
			return err
		}
		done += int64(len(jobs))
		t.progress(done)
	}
	return nil
}

func (h *handler) cancelBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := h.ins.Batches().Cancel(r.Context(), id); err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, runtime.ErrNoBatch) || errors.Is(err, runtime.ErrInvalid) {
			status = http.StatusNotFound
		}
		h.fail(w, r, status, err)
		return
	}
	redirect(w, r, "batches/"+url.PathEscape(id))
}

// cancelJob cancels a job at the attempt its page showed
// (Inspector.Cancel), and goes back to its page.
func (h *handler) cancelJob(w http.ResponseWriter, r *http.Request) {
	q := r.PostFormValue("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	id := r.PathValue("id")
	back := "jobs/" + url.PathEscape(id) + "?queue=" + url.QueryEscape(q)
	attempt, err := strconv.Atoi(r.PostFormValue("attempt"))
	if err != nil {
		h.failf(w, r, http.StatusBadRequest, "bad attempt %q", r.PostFormValue("attempt"))
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		redirect(w, r, "jobs/"+url.PathEscape(id)+"/cancel?queue="+url.QueryEscape(q)+"&attempt="+strconv.Itoa(attempt))
		return
	}
	_, err = h.ins.Cancel(r.Context(), q, id, attempt)
	var stale *runtime.StaleCancelError
	switch {
	case errors.As(err, &stale):
		h.failf(w, r, http.StatusConflict, "job %s is at attempt %d now, not %d: it was reserved again since the page was shown, and was not cancelled", id, stale.Now, stale.Seen)
	case errors.Is(err, runtime.ErrNoJob):
		h.failf(w, r, http.StatusConflict, "job %s finished before the cancel; nothing changed", id)
	case errors.Is(err, runtime.ErrJobFailed):
		h.failf(w, r, http.StatusConflict, "job %s is in the failed store already; nothing changed", id)
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, err)
	default:
		redirect(w, r, back)
	}
}

func (h *handler) retryBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := h.ins.Batches().Retry(r.Context(), id); err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	redirect(w, r, "batches/"+url.PathEscape(id))
}

// task is an action that runs in the background, with its progress.
type task struct {
	ID    string
	Title string
	Back  string // where to go when it is over
	Total int64

	mu       sync.Mutex
	done     int64
	err      error
	finished bool
	started  time.Time
	ended    time.Time
}

func (t *task) progress(done int64) {
	t.mu.Lock()
	t.done = done
	t.mu.Unlock()
}

// snapshot is a task as its page shows it.
type snapshot struct {
	ID, Title, Back string
	Done, Total     int64
	Percent         int
	Finished        bool
	Err             string
	Took            time.Duration
}

func (t *task) snapshot() snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := snapshot{ID: t.ID, Title: t.Title, Back: t.Back, Done: t.done, Total: t.Total, Finished: t.finished, Took: time.Since(t.started)}
	if t.finished {
		s.Took = t.ended.Sub(t.started)
	}
	s.Percent = 100
	if t.Total > 0 {
		s.Percent = int(min(t.done*100/t.Total, 100))
	}
	if t.err != nil {
		s.Err = t.err.Error()
	}
	return s
}

// maxTasks is how many finished tasks the dashboard remembers.
const maxTasks = 100

// startTask runs fn in the background, detached from the request.
func (h *handler) startTask(title string, total int64, back string, fn func(context.Context, *task) error) *task {
	t := &task{ID: runtime.NewID(), Title: title, Back: back, Total: total, started: time.Now()}
	h.mu.Lock()
	if len(h.tasks) >= maxTasks {
		for id, old := range h.tasks {
			if old.snapshot().Finished {
				delete(h.tasks, id)
			}
		}
	}
	h.tasks[t.ID] = t
	h.mu.Unlock()
	go func() {
		err := fn(context.Background(), t)
		if err != nil {
			h.opts.Logger.Error("dashboard: "+title+" failed", "err", err)
		}
		t.mu.Lock()
		t.err, t.finished, t.ended = err, true, time.Now()
		t.mu.Unlock()
	}()
	return t
}

func (h *handler) task(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	t := h.tasks[r.PathValue("id")]
	h.mu.Unlock()
	if t == nil {
		h.failf(w, r, http.StatusNotFound, "no such task (the dashboard forgets tasks when it restarts)")
		return
	}
	s := t.snapshot()
	h.render(w, r, "task", s.Title, s, s.Finished)
}
