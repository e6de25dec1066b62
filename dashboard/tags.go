package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/jobgen/jobgen/runtime"
)

// The Tags page lists the monitored tags (runtime.Inspector.MonitorTag),
// adds and removes them, and shows a tag's newest jobs across queues with
// where each is now: pending, running, completed or failed. It reads at
// most tagQueues queues a page, and the newest tagJobs jobs of them, so
// that its cost does not grow with the number of jobs or queues; further
// queues are on the next pages.

const (
	tagQueues = 10
	tagJobs   = 25
)

func (h *handler) tags(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tags, err := h.ins.MonitoredTags(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	tag := r.URL.Query().Get("tag")
	if tag == "" && len(tags) > 0 {
		tag = tags[0]
	}
	data := map[string]any{"Tags": tags, "Tag": tag, "Monitored": slices.Contains(tags, tag), "PerPage": tagJobs}
	if tag == "" || !slices.Contains(tags, tag) {
		h.render(w, r, "tags", "Monitored tags", data, true)
		return
	}
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = min(max(from, 0), len(queues))
	these := queues[from:min(from+tagQueues, len(queues))]
	jobs, err := h.ins.TagJobs(ctx, tag, these, tagJobs)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	data["Jobs"], data["Queues"], data["From"], data["To"] = jobs, len(queues), from+1, from+len(these)
	page := "?tag=" + url.QueryEscape(tag) + "&from="
	if from > 0 {
		data["Prev"] = page + strconv.Itoa(max(from-tagQueues, 0))
	}
	if from+tagQueues < len(queues) {
		data["Next"] = page + strconv.Itoa(from+tagQueues)
	}
	h.render(w, r, "tags", "Tag "+tag, data, false)
}

// tagAct adds (POST tags/add) or removes (POST tags/remove) the
// monitored tag of the form's field tag.
func (h *handler) tagAct(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tag := r.PostFormValue("tag")
		var err error
		if add {
			err = h.ins.MonitorTag(r.Context(), tag)
		} else {
			err = h.ins.UnmonitorTag(r.Context(), tag)
		}
		switch {
		case errors.Is(err, runtime.ErrInvalid):
			h.fail(w, r, http.StatusBadRequest, err)
			return
		case err != nil:
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		if add {
			redirect(w, r, "tags?tag="+url.QueryEscape(tag))
			return
		}
		redirect(w, r, "tags")
	}
}
