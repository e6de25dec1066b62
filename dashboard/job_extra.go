package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// A job's page shows its result (a job of //job:result=Type, while the
// result is kept: EngineConfig.ResultRetention) and its timeline: when it
// was dispatched, each attempt that ended in an error, and where it is
// now.

// resultLimit is the most of an encoded result a job's page reads: a
// longer one is not read, and the page links to its download.
const resultLimit = 64 << 10

// resultView is a job's result on its page.
type resultView struct {
	// Body is the result as indented JSON, its first previewLimit bytes;
	// "" when Big or Bad.
	Body string
	// BodySize is the size of the whole JSON when Body is cut short.
	BodySize int
	// Size is the size of the encoded result; Big is set when it is
	// over resultLimit and the page did not read it.
	Size   int64
	SizeKB int64
	Big    bool
	Bad    string
}

// jobResult reads the result job id of queue recorded, if any.
func (h *handler) jobResult(ctx context.Context, queue, id string) (*resultView, error) {
	head, ok, err := h.ins.Result(ctx, queue, id, resultLimit)
	if err != nil || !ok {
		return nil, err
	}
	rv := &resultView{Size: head.Size, SizeKB: (head.Size + 1023) / 1024}
	if head.Encoded == nil {
		rv.Big = true
		return rv, nil
	}
	body, err := bodyJSON(head.Encoded)
	if err != nil {
		rv.Bad = fmt.Sprintf("the result does not decode: %v", err)
		return rv, nil
	}
	rv.Body = body
	if len(body) > previewLimit {
		rv.BodySize, rv.Body = len(body), cutUTF8(body, previewLimit)
	}
	return rv, nil
}

// result sends the whole result of job id of queue (the query's queue)
// as indented JSON, as a download.
func (h *handler) result(w http.ResponseWriter, r *http.Request) {
	id, q := r.PathValue("id"), r.URL.Query().Get("queue")
	if err := runtime.ValidateQueueName(q); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	enc, ok, err := h.e.ReadResult(r.Context(), q, id)
	if err != nil && !ok {
		var failed *runtime.JobFailedError
		if errors.As(err, &failed) {
			h.failf(w, r, http.StatusNotFound, "job %s failed: it has no result", id)
			return
		}
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if !ok {
		h.failf(w, r, http.StatusNotFound, "job %s of queue %s has no result: not finished, or its result expired", id, q)
		return
	}
	body, err := bodyJSON(enc)
	if err != nil {
		h.failf(w, r, http.StatusUnprocessableEntity, "the result of job %s does not decode: %v", id, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename=`+strconv.Quote(sanitizeFilename(id)+"-result.json"))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(body + "\n"))
}

// step is one moment of a job's timeline.
type step struct {
	At      time.Time // zero when not known
	Kind    string    // dispatched, error, running, waiting, due, failed, finished, cancelled
	Attempt int
	Text    string
}

// timeline is what is known of v's life, oldest first: its dispatch,
// each attempt's error (the last 10 kept; the last 3 once it succeeded),
// and its state now. started
// is when its running attempt began, if one runs, or when the attempt
// that succeeded began.
func timeline(v jobView, started time.Time) []step {
	var out []step
	if !v.Dispatched.IsZero() {
		out = append(out, step{At: v.Dispatched, Kind: "dispatched", Text: "dispatched to " + v.Queue})
	}
	for _, e := range v.Errors {
		out = append(out, step{At: e.At, Kind: "error", Attempt: e.Attempt, Text: e.Error})
	}
	switch v.State {
	case string(runtime.StateReady):
		txt := "waiting to be taken"
		if v.Group != "" {
			txt = "waiting for its turn in group " + v.Group
		}
		out = append(out, step{Kind: "waiting", Attempt: v.Attempts + 1, Text: txt})
	case string(runtime.StateDelayed):
		out = append(out, step{At: v.Due, Kind: "due", Attempt: v.Attempts + 1, Text: "waiting for its delay or backoff to end"})
	case string(runtime.StateReserved):
		txt := "running"
		if v.Worker != "" {
			txt += " on " + v.Worker
		}
		out = append(out, step{At: started, Kind: "running", Attempt: v.Attempts, Text: txt})
	case string(runtime.StateFailed):
		kind, txt := "failed", "failed for good"
		if v.Cancelled {
			kind, txt = "cancelled", "cancelled"
		}
		// The failed store's errors end with the attempt that failed the
		// job: that step is this one.
		if n := len(out); n > 0 && out[n-1].Kind == "error" && out[n-1].Attempt == v.Attempts {
			out = out[:n-1]
		}
		out = append(out, step{At: v.FailedAt, Kind: kind, Attempt: v.Attempts, Text: txt + ": " + errorGist(v.Error)})
	case "finished":
		if v.Attempts > 1 && len(v.Errors) == 0 {
			// Earlier attempts that left no error: released by their
			// handler, given back, or from before errors were kept.
			out = append(out, step{Kind: "retried", Attempt: v.Attempts - 1,
				Text: fmt.Sprintf("%d earlier attempts did not succeed, with no error kept", v.Attempts-1)})
		} else if n := v.Attempts - 1 - len(v.Errors); len(v.Errors) > 0 && n > 0 && v.Errors[0].Attempt > 1 {
			// The record of a finished job keeps its last 3 errors.
			out = append(out, step{Kind: "retried", Attempt: v.Errors[0].Attempt - 1,
				Text: fmt.Sprintf("%d earlier attempts before these; the record of a finished job keeps the last 3 errors", v.Errors[0].Attempt-1)})
		}
		if !started.IsZero() {
			out = append(out, step{At: started, Kind: "running", Attempt: v.Attempts, Text: "started" + onWorker(v.Worker)})
		}
		out = append(out, step{At: v.FinishedAt, Kind: "finished", Attempt: v.Attempts, Text: "succeeded after " + duration(v.Runtime)})
	}
	slices.SortStableFunc(out, func(a, b step) int {
		if a.At.IsZero() || b.At.IsZero() {
			return 0
		}
		return a.At.Compare(b.At)
	})
	return out
}

func onWorker(w string) string {
	if w == "" {
		return ""
	}
	return " on " + w
}

// runningOn fills in the worker running v, and returns when its attempt
// started.
func (h *handler) runningOn(ctx context.Context, v *jobView) time.Time {
	ws, err := h.ins.Workers(ctx)
	if err != nil {
		return time.Time{}
	}
	for _, wk := range ws {
		for _, j := range wk.Running {
			if j.Queue == v.Queue && j.ID == v.ID {
				v.Worker = wk.Name + " (" + wk.Host + ")"
				return j.StartedAt
			}
		}
	}
	return time.Time{}
}

// resultArgs is what the result template gets from a job page's data.
func resultArgs(base string, data map[string]any) map[string]any {
	out := map[string]any{"Base": base, "Result": data["Result"], "Gone": data["Gone"]}
	if v, ok := data["Job"].(jobView); ok {
		out["Queue"], out["ID"] = v.Queue, v.ID
	}
	return out
}
