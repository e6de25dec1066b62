package laravel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Payload is the JSON a Laravel queue carries for one job, with the
// fields Illuminate\Queue\Queue::createPayloadArray and RedisQueue write
// from Laravel 8 to 13. A field a version does not write decodes as its
// zero value; fields this struct does not name are kept only in the raw
// bytes of a Reserved job.
type Payload struct {
	UUID        string `json:"uuid"`
	DisplayName string `json:"displayName"`
	// Job is what the PHP worker calls: Illuminate\Queue\CallQueuedHandler@call
	// for a queued object, or "Class@method" for a string job.
	Job string `json:"job"`
	// MaxTries is the job's $tries; nil means the worker's --tries.
	MaxTries *int64 `json:"maxTries"`
	// MaxExceptions is the job's $maxExceptions, or nil.
	MaxExceptions *int64 `json:"maxExceptions"`
	FailOnTimeout bool   `json:"failOnTimeout"`
	// Backoff is the job's backoff in seconds, comma-separated ("1,5,10"),
	// or nil for the worker's --backoff.
	Backoff *string `json:"backoff"`
	// Timeout is the job's $timeout in seconds, or nil.
	Timeout *int64 `json:"timeout"`
	// RetryUntil is the unix second after which the job is not retried,
	// or nil.
	RetryUntil *int64 `json:"retryUntil"`
	// Data is {"commandName": class, "command": serialize($job)} for a
	// queued object (12.x adds batchId); for a string job, what was
	// pushed with it.
	Data json.RawMessage `json:"data"`
	// ID is RedisQueue's random job ID.
	ID string `json:"id"`
	// Attempts counts the pops so far.
	Attempts int64 `json:"attempts"`
	// CreatedAt (12.x) is the unix second the payload was made.
	CreatedAt *int64 `json:"createdAt,omitempty"`
	// Delay (12.x) is the delay the job was pushed with, in seconds.
	Delay *int64 `json:"delay,omitempty"`
}

// CommandData is Payload.Data of a queued object.
type CommandData struct {
	CommandName string `json:"commandName"`
	Command     string `json:"command"`
	BatchID     string `json:"batchId,omitempty"`
}

// CallQueuedHandler is Payload.Job of a queued object.
const CallQueuedHandler = `Illuminate\Queue\CallQueuedHandler@call`

// DecodePayload decodes a payload as Laravel or cjson wrote it. Numbers
// may be written as floats (cjson writes 1e+15 for large ones); an
// empty data array may read {} or [].
func DecodePayload(b []byte) (Payload, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Payload{}, fmt.Errorf("laravel payload: %w", err)
	}
	var p Payload
	for _, f := range payloadFields {
		v, ok := raw[f.key]
		if !ok || isNull(v) {
			continue
		}
		if err := f.decode(v, &p); err != nil {
			return Payload{}, fmt.Errorf("laravel payload: %s: %w", f.key, err)
		}
	}
	p.Data = raw["data"]
	if p.Job == "" {
		return Payload{}, fmt.Errorf("laravel payload: no job")
	}
	return p, nil
}

// payloadFields are the fields DecodePayload reads, each with its
// decoder, in the order their errors are reported; a field that is
// missing or null is left zero. Data is kept raw.
var payloadFields = []struct {
	key    string
	decode func(v json.RawMessage, p *Payload) error
}{
	{"uuid", stringField(func(p *Payload) *string { return &p.UUID })},
	{"displayName", stringField(func(p *Payload) *string { return &p.DisplayName })},
	{"job", stringField(func(p *Payload) *string { return &p.Job })},
	{"id", stringField(func(p *Payload) *string { return &p.ID })},
	{"maxTries", intField(func(p *Payload) **int64 { return &p.MaxTries })},
	{"maxExceptions", intField(func(p *Payload) **int64 { return &p.MaxExceptions })},
	{"timeout", intField(func(p *Payload) **int64 { return &p.Timeout })},
	{"retryUntil", intField(func(p *Payload) **int64 { return &p.RetryUntil })},
	{"createdAt", intField(func(p *Payload) **int64 { return &p.CreatedAt })},
	{"delay", intField(func(p *Payload) **int64 { return &p.Delay })},
	{"attempts", func(v json.RawMessage, p *Payload) (err error) {
		p.Attempts, err = jsonInt(v)
		return err
	}},
	{"failOnTimeout", func(v json.RawMessage, p *Payload) error {
		return json.Unmarshal(v, &p.FailOnTimeout)
	}},
	{"backoff", decodeBackoff},
}

// stringField decodes a JSON string into the field dst returns.
func stringField(dst func(*Payload) *string) func(json.RawMessage, *Payload) error {
	return func(v json.RawMessage, p *Payload) error { return json.Unmarshal(v, dst(p)) }
}

// intField decodes a whole JSON number (see jsonInt) into the optional
// field dst returns.
func intField(dst func(*Payload) **int64) func(json.RawMessage, *Payload) error {
	return func(v json.RawMessage, p *Payload) error {
		n, err := jsonInt(v)
		if err != nil {
			return err
		}
		*dst(p) = &n
		return nil
	}
}

// decodeBackoff reads a string "1,5,10" as Laravel writes it, or a
// number or a list from other producers.
func decodeBackoff(v json.RawMessage, p *Payload) error {
	var s string
	if json.Unmarshal(v, &s) == nil {
		p.Backoff = &s
		return nil
	}
	if n, err := jsonInt(v); err == nil {
		s = strconv.FormatInt(n, 10)
		p.Backoff = &s
		return nil
	}
	var list []json.Number
	if err := json.Unmarshal(v, &list); err != nil {
		return fmt.Errorf("want a string, number or list, got %s", v)
	}
	parts := make([]string, len(list))
	for i, n := range list {
		parts[i] = n.String()
	}
	s = strings.Join(parts, ",")
	p.Backoff = &s
	return nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// jsonInt reads a JSON number that holds a whole number, as an integer
// or a float (cjson writes large numbers as 1.7e+09).
func jsonInt(v json.RawMessage) (int64, error) {
	var n json.Number
	if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '"' {
		return 0, fmt.Errorf("want a number, got %s", v)
	}
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, fmt.Errorf("want a number, got %s", v)
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("want a whole number, got %s", v)
	}
	return int64(f), nil
}

// Command returns Data as a queued object's data, and false for a
// string job.
func (p Payload) Command() (CommandData, bool) {
	if p.Job != CallQueuedHandler {
		return CommandData{}, false
	}
	var d CommandData
	if err := json.Unmarshal(p.Data, &d); err != nil || d.Command == "" {
		return CommandData{}, false
	}
	return d, true
}

// BackoffDelays returns Backoff as durations; nil if it is not set or
// does not parse.
func (p Payload) BackoffDelays() []time.Duration {
	if p.Backoff == nil || *p.Backoff == "" {
		return nil
	}
	var out []time.Duration
	for _, s := range strings.Split(*p.Backoff, ",") {
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || n < 0 {
			return nil
		}
		out = append(out, time.Duration(n*float64(time.Second)))
	}
	return out
}

// Encode returns the payload as Laravel's RedisQueue writes it: its keys
// in Laravel's order, null for the options not set, "/" escaped as PHP's
// json_encode does.
func (p Payload) Encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	field := func(key string, v any) error {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(key))
		b.WriteByte(':')
		if raw, ok := v.(json.RawMessage); ok {
			b.Write(raw)
			return nil
		}
		enc, err := phpJSON(v)
		if err != nil {
			return fmt.Errorf("laravel payload: %s: %w", key, err)
		}
		b.Write(enc)
		return nil
	}
	data := p.Data
	if len(data) == 0 {
		data = json.RawMessage("[]")
	}
	for _, f := range []struct {
		k string
		v any
	}{
		{"uuid", p.UUID}, {"displayName", p.DisplayName}, {"job", p.Job},
		{"maxTries", p.MaxTries}, {"maxExceptions", p.MaxExceptions},
		{"failOnTimeout", p.FailOnTimeout}, {"backoff", p.Backoff},
		{"timeout", p.Timeout}, {"retryUntil", p.RetryUntil},
	} {
		if err := field(f.k, f.v); err != nil {
			return nil, err
		}
	}
	if p.CreatedAt != nil {
		if err := field("createdAt", p.CreatedAt); err != nil {
			return nil, err
		}
	}
	if p.Delay != nil {
		if err := field("delay", p.Delay); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		k string
		v any
	}{{"data", data}, {"id", p.ID}, {"attempts", p.Attempts}} {
		if err := field(f.k, f.v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// phpJSON encodes v as PHP's json_encode does by default: no HTML
// escaping, "/" escaped.
func phpJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return bytes.ReplaceAll(out, []byte("/"), []byte(`\/`)), nil
}
