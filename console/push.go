package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

var pushVerb = &verb{
	name:        "queue:push",
	args:        "NAME",
	summary:     "Push a job by its wire name, its fields given as JSON",
	maxArgs:     1,
	needsRouter: true,
	about: `Push one job of the type registered under NAME (its wire name, such
as emails.SendEmail), its fields given with --json as a JSON object:
{"To": "ada@example.com"}. The JSON is decoded into the job's Go type,
whose fields must all be known, and encoded into its msgpack body as a
dispatch from Go would; a job type with options (tries, backoff, queue)
keeps them. It runs from the application's binary, which knows the
types; a name it has no type for is refused, with the names it has.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var (
			queue string
			body  string
			delay time.Duration
		)
		fs.stringVar(&queue, "queue", "", "queue to push to", "the job's own, else \"default\"")
		fs.meta["queue"] = "NAME"
		fs.stringVar(&body, "json", "{}", "the job's fields, as a JSON object", "")
		fs.meta["json"] = "OBJECT"
		fs.durationVar(&delay, "delay", "make the job ready only after this", "")
		return func(ctx context.Context, s *session) error {
			if len(s.args) != 1 {
				return usagef("name the job type to push (one of %v)", c.Router.Names())
			}
			if queue != "" {
				if err := runtime.ValidateQueueName(queue); err != nil {
					return usagef("--queue: %s", oneLine(err))
				}
			}
			id, jt, q, err := pushJSON(ctx, s.engine, c.Router, s.args[0], queue, []byte(body), delay)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "Pushed %s (%s) to queue %s: %s\n", jt.Name, jt.Type, q, id)
			return nil
		}
	},
}

// pushJSON pushes one job of the type registered as name on r, its
// fields decoded from js, and returns its ID, type and queue.
func pushJSON(ctx context.Context, e *runtime.Engine, r *runtime.Router, name, queue string, js []byte, delay time.Duration) (string, runtime.JobType, string, error) {
	var jt runtime.JobType
	found := false
	for _, t := range r.JobTypes() {
		if t.Name == name {
			jt, found = t, true
			break
		}
	}
	if !found || jt.Type == nil {
		return "", jt, "", usagef("no job type is registered as %q in this binary, so its fields are unknown; registered: %v", name, r.Names())
	}
	v := reflect.New(jt.Type)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return "", jt, "", usagef("--json does not decode into %s (%s): %v", jt.Type, name, err)
	}
	if dec.More() {
		return "", jt, "", usagef("--json holds more than one JSON value")
	}
	job, ok := v.Elem().Interface().(runtime.Job)
	if !ok {
		// A type registered by hand that is no runtime.Job: encode it as
		// runtime.Register decodes it, with no options.
		b, err := runtime.Encode(v.Elem().Interface())
		if err != nil {
			return "", jt, "", err
		}
		job = rawJob{name: name, body: b}
	}
	p := runtime.NewPendingDispatch(job)
	if queue != "" {
		p.OnQueue(queue)
	}
	if delay > 0 {
		p.Delay(delay)
	}
	id, err := e.Dispatch(ctx, p)
	return id, jt, p.Queue(), err
}

// rawJob is a job by name and encoded body, with no options.
type rawJob struct {
	name string
	body []byte
}

func (j rawJob) JobName() string                { return j.name }
func (j rawJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j rawJob) EncodeJob() ([]byte, error)     { return j.body, nil }
