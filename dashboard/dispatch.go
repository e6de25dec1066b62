package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/jobgen/jobgen/runtime"
)

// Dispatching from the page: a form built from the fields of a job type
// registered on Options.Router. Fields of basic kinds are plain inputs;
// the others (slices, maps, structs, times) take JSON.

// field is one input of the dispatch form.
type field struct {
	Name  string
	Type  string // the Go type, for the label
	Input string // "text", "number", "checkbox" or "json"
}

// formFields lists the exported fields of t, a struct type.
func formFields(t reflect.Type) []field {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("msgpack") == "-" {
			continue // msgpack:"-": never encoded, so never sent
		}
		in := "json"
		switch f.Type.Kind() {
		case reflect.String:
			in = "text"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			in = "number"
		case reflect.Bool:
			in = "checkbox"
		}
		out = append(out, field{Name: f.Name, Type: f.Type.String(), Input: in})
	}
	return out
}

// jobType finds the job type name on the router.
func (h *handler) jobType(name string) (runtime.JobType, bool) {
	if h.opts.Router == nil {
		return runtime.JobType{}, false
	}
	for _, jt := range h.opts.Router.JobTypes() {
		if jt.Name == name {
			return jt, true
		}
	}
	return runtime.JobType{}, false
}

func (h *handler) dispatchForm(w http.ResponseWriter, r *http.Request) {
	if h.opts.Router == nil || h.opts.ReadOnly {
		h.failf(w, r, http.StatusNotFound, "dispatching from the dashboard needs Options.Router, and is off in read-only mode")
		return
	}
	data := map[string]any{"Types": h.opts.Router.JobTypes()}
	if name := r.URL.Query().Get("job"); name != "" {
		jt, ok := h.jobType(name)
		if !ok {
			h.failf(w, r, http.StatusNotFound, "no job type %q is registered", name)
			return
		}
		data["Job"] = jt
		data["Fields"] = formFields(jt.Type)
		data["Queue"] = jt.Options.Queue
	}
	h.render(w, r, "dispatch", "Dispatch", data, true)
}

// dispatch builds a job of the type named from the form and dispatches
// it with the type's options (its queue overridden if the form names
// one), then shows the job.
func (h *handler) dispatch(w http.ResponseWriter, r *http.Request) {
	if h.opts.Router == nil {
		h.failf(w, r, http.StatusNotFound, "dispatching from the dashboard needs Options.Router")
		return
	}
	jt, ok := h.jobType(r.PostFormValue("job"))
	if !ok {
		h.failf(w, r, http.StatusNotFound, "no job type %q is registered", r.PostFormValue("job"))
		return
	}
	v := reflect.New(jt.Type).Elem()
	for _, f := range formFields(jt.Type) {
		if err := setField(v.FieldByName(f.Name), f, r.PostForm[f.Name]); err != nil {
			h.failf(w, r, http.StatusBadRequest, "field %s: %v", f.Name, err)
			return
		}
	}
	queue := strings.TrimSpace(r.PostFormValue("queue"))
	if queue != "" {
		if err := runtime.ValidateQueueName(queue); err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
	}
	var id string
	var err error
	if job, ok := v.Interface().(runtime.Job); ok {
		pd := runtime.NewPendingDispatch(job)
		if queue != "" {
			pd = pd.OnQueue(queue)
		}
		id, err = h.e.Dispatch(r.Context(), pd)
	} else {
		var body []byte
		if body, err = runtime.Encode(v.Interface()); err == nil {
			env := &runtime.Envelope{Name: jt.Name, Queue: queue, Body: body}
			if env.Queue == "" {
				env.Queue = runtime.DefaultQueue
			}
			err = h.e.Push(r.Context(), env)
			id = env.ID
		}
	}
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	redirect(w, r, "jobs/"+url.PathEscape(id))
}

// setField sets v from the form's values for f.
func setField(v reflect.Value, f field, vals []string) error {
	s := ""
	if len(vals) > 0 {
		s = strings.TrimSpace(vals[len(vals)-1])
	}
	switch f.Input {
	case "checkbox":
		v.SetBool(s != "")
		return nil
	case "text":
		v.SetString(s)
		return nil
	}
	if s == "" {
		return nil // the zero value
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetFloat(x)
	default:
		if err := json.Unmarshal([]byte(s), v.Addr().Interface()); err != nil {
			return fmt.Errorf("not JSON for %s: %v", f.Type, err)
		}
	}
	return nil
}
