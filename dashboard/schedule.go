package dashboard

import (
	"net/http"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// The periodic jobs page: the entries of Options.Schedule with their
// next and last runs, paused and resumed, or run now, from the page.

// entryRow is one schedule entry on the page.
type entryRow struct {
	schedule.EntryStatus
	// Job is the wire name of the job the entry dispatches.
	Job string
}

func (h *handler) schedule(w http.ResponseWriter, r *http.Request) {
	s := h.opts.Schedule
	if s == nil {
		h.render(w, r, "schedule", "Periodic jobs", map[string]any{"Missing": true}, true)
		return
	}
	st, err := s.Status(r.Context(), h.e)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	rows := make([]entryRow, len(st))
	for i, e := range st {
		rows[i].EntryStatus = e
		if en, ok := s.Entry(e.Name); ok {
			rows[i].Job = en.Job().JobName()
		}
	}
	data := map[string]any{"Entries": rows}
	if n, ok := h.noteOf(r); ok {
		data["Note"] = n
	}
	h.render(w, r, "schedule", "Periodic jobs", data, false)
}

// entryParam reads the entry the form names, and checks the schedule
// has it.
func (h *handler) entryParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	if h.opts.Schedule == nil {
		h.failf(w, r, http.StatusNotFound, "the dashboard has no schedule: pass it as Options.Schedule")
		return "", false
	}
	name := r.PostFormValue("entry")
	if _, ok := h.opts.Schedule.Entry(name); !ok {
		h.failf(w, r, http.StatusNotFound, "no schedule entry is named %q", name)
		return "", false
	}
	return name, true
}

func (h *handler) pauseEntry(w http.ResponseWriter, r *http.Request) {
	if name, ok := h.entryParam(w, r); ok {
		if err := h.opts.Schedule.PauseEntry(r.Context(), h.e, name); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		redirect(w, r, "schedule")
	}
}

func (h *handler) resumeEntry(w http.ResponseWriter, r *http.Request) {
	if name, ok := h.entryParam(w, r); ok {
		if err := h.opts.Schedule.ResumeEntry(r.Context(), h.e, name); err != nil {
			h.fail(w, r, http.StatusBadGateway, err)
			return
		}
		redirect(w, r, "schedule")
	}
}

// runEntry dispatches an entry's job now, paused or not, and goes back
// to the page with a note of the job, or of why there is none (an entry
// without overlapping whose last run is still queued or running).
func (h *handler) runEntry(w http.ResponseWriter, r *http.Request) {
	name, ok := h.entryParam(w, r)
	if !ok {
		return
	}
	n := note{Entry: name}
	n.JobID, n.Err = h.opts.Schedule.DispatchNow(r.Context(), h.e, name)
	redirect(w, r, "schedule?note="+h.leaveNote(n))
}

// note is what an action tells the page it redirects to: the job it
// dispatched, or its error.
type note struct {
	Entry string
	JobID string
	Err   error
	at    time.Time
}

// Message is the note's error as text.
func (n note) Message() string {
	if n.Err == nil {
		return ""
	}
	return n.Err.Error()
}

// maxNotes is how many notes the dashboard keeps, and noteLife how long.
const (
	maxNotes = 100
	noteLife = 10 * time.Minute
)

// leaveNote keeps n for the page the action redirects to, and returns
// the ID that page's URL carries. Notes are kept in the handler, as
// tasks are, so a page cannot be made to show text of a link's choosing.
func (h *handler) leaveNote(n note) string {
	n.at = time.Now()
	id := runtime.NewID()
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, old := range h.notes {
		if len(h.notes) >= maxNotes || n.at.Sub(old.at) > noteLife {
			delete(h.notes, k)
		}
	}
	h.notes[id] = n
	return id
}

// noteOf returns the note the request's URL names, if it is still kept.
func (h *handler) noteOf(r *http.Request) (note, bool) {
	id := r.URL.Query().Get("note")
	if id == "" {
		return note{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n, ok := h.notes[id]
	if !ok || time.Since(n.at) > noteLife {
		return note{}, false
	}
	return n, true
}
