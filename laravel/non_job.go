package laravel

import (
	"bytes"
	"encoding/json"
)

// notAJob says what makes a payload no Laravel job at all, or "" if it
// has a job's shape: a JSON object naming, in "job", what to run, and
// counting its attempts. Laravel's pop script cannot reserve such a
// payload (it adds one to its attempts), and no worker can run it, so a
// Go worker fails it rather than leave it at the head of its queue.
func notAJob(raw []byte) string {
	if !json.Valid(raw) {
		return "it is not JSON"
	}
	t := bytes.TrimSpace(raw)
	if t[0] != '{' {
		return "it is a JSON " + jsonKind(t[0]) + ", not an object"
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(t, &p); err != nil {
		return "it does not decode: " + err.Error()
	}
	var job string
	if v, ok := p["job"]; !ok || json.Unmarshal(v, &job) != nil || job == "" {
		return `it has no "job" naming the class (or Class@method) to run`
	}
	var n json.Number
	if v, ok := p["attempts"]; !ok || json.Unmarshal(v, &n) != nil {
		return `its "attempts" is missing or not a number`
	}
	return ""
}

// jsonKind names the JSON type of a value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
