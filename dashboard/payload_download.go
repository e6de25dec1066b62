package dashboard

import (
	"compress/gzip"
	"net/http"
	"strconv"

	"github.com/jobgen/jobgen/runtime"
)

// payload sends the whole payload of job id of queue (the query's
// queue) as indented JSON, as a download: the job page shows only its
// first previewLimit bytes. A sealed (encrypted) body is refused: the
// dashboard never opens one.
func (h *handler) payload(w http.ResponseWriter, r *http.Request) {
	id, q := r.PathValue("id"), r.URL.Query().Get("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	j, ok, err := h.ins.FindJob(r.Context(), q, id)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if !ok {
		h.failf(w, r, http.StatusNotFound, "job %s is not in queue %s: it finished and was deleted, was cleared, or was never dispatched there", id, q)
		return
	}
	env, err := runtime.DecodeEnvelope(q, id, j.Payload)
	if err != nil {
		h.failf(w, r, http.StatusUnprocessableEntity, "the payload of job %s does not decode: %v", id, err)
		return
	}
	if env.Encrypted {
		h.failf(w, r, http.StatusForbidden, "the body of job %s is encrypted; the dashboard does not open it", id)
		return
	}
	body, err := bodyJSON(env.Body)
	if err != nil {
		h.failf(w, r, http.StatusUnprocessableEntity, "the body of job %s does not decode: %v", id, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename=`+strconv.Quote(sanitizeFilename(id)+".json"))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept-Encoding")
	if !acceptsGzip(r) {
		_, _ = w.Write([]byte(body + "\n"))
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	_, _ = zw.Write([]byte(body + "\n"))
	_ = zw.Close()
}

// sanitizeFilename keeps the letters, digits, '-' and '_' of s, for a
// Content-Disposition file name.
func sanitizeFilename(s string) string {
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "payload"
	}
	return string(out)
}
