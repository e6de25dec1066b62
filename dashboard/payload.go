package dashboard

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/runtime"
)

// jobView is a job as the pages show it: its envelope read, its body
// decoded to JSON for reading.
type jobView struct {
	Queue      string
	ID         string
	State      string
	Name       string
	Attempts   int
	Exceptions int
	Dispatched time.Time
	Due        time.Time
	Tags       []string
	BatchID    string
	// Workflow and Step name the workflow a step's job belongs to, and
	// the step; "" for any other job.
	Workflow, Step string
	Tries          int
	Timeout        time.Duration
	Chain          int
	// Body is the payload as indented JSON, its first previewLimit
	// bytes; "" when Sealed or Bad.
	Body string
	// BodySize is the size of the whole indented JSON when Body is cut
	// short; 0 when Body is whole.
	BodySize int
	// Sealed is true for an encrypted body: the dashboard never opens it.
	Sealed bool
	// Bad says why the payload did not decode, if it did not.
	Bad string
	// Failed jobs only.
	Error    string
	FailedAt time.Time
	// Cancelled: an operator cancelled the job (Inspector.Cancel).
	Cancelled bool
	// Errors are the job's last attempts' errors, on its page.
	Errors []runtime.AttemptError
	// Progress is how far the job got, as its handler reported it.
	Progress *runtime.JobProgress
	// Worker is the name of the worker running it now, if any.
	Worker string
	// Finished is set for a job that succeeded, read from its queue's
	// record of finished jobs (EngineConfig.KeepFinished): the record
	// keeps no payload.
	Finished   bool
	FinishedAt time.Time
	Runtime    time.Duration
	ResultSize int
	// body is the encoded body readJobHead kept for readBody.
	body []byte
	// Group is the fair group a ready job waits in for its turn; "" for
	// one in the ready list.
	Group string
}

// readJob decodes payload into a jobView, its body included, as a list
// shows it (listPreview).
func readJob(queue, id string, state runtime.JobState, payload []byte) jobView {
	v := readJobHead(queue, id, state, payload)
	v.readBody(listPreview)
	return v
}

// readJobHead decodes payload's envelope into a jobView, leaving the
// body to readBody: a search or a scan that looks at names, tags and
// batches does not pay for decoding every body it passes.
func readJobHead(queue, id string, state runtime.JobState, payload []byte) jobView {
	v := jobView{Queue: queue, ID: id, State: string(state)}
	if payload == nil {
		v.Bad = "gone while it was read"
		return v
	}
	env, err := runtime.DecodeEnvelope(queue, id, payload)
	if err != nil {
		v.Bad = err.Error()
		return v
	}
	v.Name, v.Tags, v.BatchID, v.Tries, v.Timeout, v.Chain = env.Name, env.Tags, env.BatchID, env.Tries, env.Timeout, len(env.Chain)
	if env.Step != nil {
		v.Workflow, v.Step = env.Step.Workflow, env.Step.Step
	}
	if env.DispatchedAt > 0 {
		v.Dispatched = time.UnixMilli(env.DispatchedAt)
	}
	if env.Encrypted {
		v.Sealed = true
		return v
	}
	v.body = env.Body
	return v
}

// readBody decodes the body readJobHead kept into Body, its first limit
// bytes as indented JSON.
func (v *jobView) readBody(limit int) {
	if v.body == nil {
		return
	}
	body, size, err := bodyPreview(v.body, limit)
	v.body = nil
	if err != nil {
		v.Bad = fmt.Sprintf("body does not decode: %v", err)
		return
	}
	v.Body = body
	if size > limit {
		v.BodySize = size
		v.Body = cutUTF8(v.Body, limit)
	}
}

// bodyPreview is bodyJSON with every string cut to its first limit
// bytes before it is encoded, so that a preview of a body of 1 MB costs
// the encoding of a few KB; size is the length the whole indented JSON
// has, counted without encoding the strings' rest.
func bodyPreview(body []byte, limit int) (preview string, size int, err error) {
	var x any
	if err := msgpack.Unmarshal(body, &x); err != nil {
		return "", 0, err
	}
	rest := 0
	x = cutStrings(jsonable(x), limit, &rest)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x); err != nil {
		return "", 0, err
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out, len(out) + rest, nil
}

// cutStrings cuts each string of x (as jsonable returns it) longer than
// limit to its first limit bytes, and adds to rest the length, in JSON,
// of what it cut off.
func cutStrings(x any, limit int, rest *int) any {
	switch v := x.(type) {
	case string:
		if len(v) <= limit {
			return v
		}
		cut := cutUTF8(v, limit)
		*rest += jsonStringLen(v) - jsonStringLen(cut)
		return cut
	case map[string]any:
		for k, e := range v {
			v[k] = cutStrings(e, limit, rest)
		}
	case []any:
		for i, e := range v {
			v[i] = cutStrings(e, limit, rest)
		}
	}
	return x
}

// jsonStringLen is the length of s as encoding/json writes it without
// HTML escaping, quotes included.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plainWord(s[i:i+8]) {
			n, i = n+8, i+8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += w
		}
		i += w
	}
	return n
}

// previewLimit is the most of a payload, as indented JSON, that a job's
// page shows; it links to the whole (GET jobs/{id}/payload).
const previewLimit = 64 << 10

// listPreview is the most of each payload that a list of jobs shows:
// a page of 50 jobs of 1 MB stays small.
const listPreview = 4 << 10

// cutUTF8 is s cut to at most n bytes, on a character's boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// bodyJSON decodes a msgpack body (runtime.Encode) into indented JSON,
// with <, > and & as they are: html/template escapes the page.
func bodyJSON(body []byte) (string, error) {
	var x any
	if err := msgpack.Unmarshal(body, &x); err != nil {
		return "", err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(jsonable(x)); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// jsonable turns what msgpack decodes (maps with keys of any type) into
// what encoding/json takes.
func jsonable(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonable(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonable(e)
		}
		return v
	case []byte:
		return string(v)
	}
	return x
}

// plainWord reports whether the 8 bytes of s are ASCII that JSON writes
// as they are: none under 0x20, none of '"' and '\\', none past 0x7f.
func plainWord(s string) bool {
	w := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zeroIn := func(v uint64) bool { return (v-ones)&^v&highs != 0 }
	return (w|(w-0x20*ones))&highs == 0 && !zeroIn(w^('"'*ones)) && !zeroIn(w^('\\'*ones))
}

// matches reports whether v passes a search: name and tag are
// substrings (case-insensitive) of its name and one of its tags.
func (v jobView) matches(name, tag string) bool {
	if name != "" && !strings.Contains(strings.ToLower(v.Name), strings.ToLower(name)) {
		return false
	}
	if tag == "" {
		return true
	}
	for _, t := range v.Tags {
		if strings.Contains(strings.ToLower(t), strings.ToLower(tag)) {
			return true
		}
	}
	return false
}
