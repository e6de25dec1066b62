package runtime

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/jobgen/jobgen/internal/mpack"
)

// envelopeVersion is written into every whole envelope (Encode). Version
// 1 envelopes always carry their ID, queue and dispatch time. Version 2
// ones leave out a dispatch time that their ID tells (see idTime), and
// those that pushes stored under a queue before version 3 leave out the
// ID and queue where the keys tell them. Version 3 is the stored form
// that pushes write now (storedVersion, see envelope_codec.go): not a map
// but the name, the optional fields and the body in a row, leaving out
// the same. All three decode. A payload with another version, or none,
// is foreign and fails to decode.
const envelopeVersion = 2

// storedVersion is the version of the stored form, which a push writes
// under the job's ID in its queue's payloads hash.
const storedVersion = 3

// Envelope is what travels through Redis for one job: the job's encoded
// body and the options it was dispatched with. It is encoded with
// msgpack. Attempt and exception counts are not part of it; they live in
// Redis beside the job, so no script ever decodes a payload.
type Envelope struct {
	// Version is the version of the last encoding written (2 for a whole
	// envelope, 3 for a stored payload), or the version a payload was
	// decoded from.
	Version int `msgpack:"v"`
	// ID is unique per job. IDs sort by dispatch time. A stored payload
	// leaves it out: its hash field is the ID.
	ID string `msgpack:"id"`
	// Name is the job's stable wire name, used by the router.
	Name string `msgpack:"n"`
	// Queue is the queue the job was pushed to. A stored payload leaves it
	// out when the queue that holds it is this one.
	Queue string `msgpack:"q"`
	// Connection is the name of the connection the job was dispatched on;
	// empty for the default.
	Connection string `msgpack:"c,omitempty"`
	// Body is the encoded job.
	Body []byte `msgpack:"b"`

	// Tries is the number of attempts allowed; 0 means the worker's default.
	Tries int `msgpack:"t,omitempty"`
	// Backoff lists the delays between attempts; the last one repeats.
	// Empty means the worker's default.
	Backoff []time.Duration `msgpack:"bo,omitempty"`
	// Timeout is the limit on one attempt; 0 means the worker's default.
	Timeout time.Duration `msgpack:"to,omitempty"`
	// RetryUntil, if set, is when the job stops being retried (unix ms).
	RetryUntil int64 `msgpack:"ru,omitempty"`
	// MaxExceptions, if positive, fails the job after that many exceptions
	// even when tries remain.
	MaxExceptions int `msgpack:"me,omitempty"`
	// FailOnTimeout fails the job at its first timeout.
	FailOnTimeout bool `msgpack:"ft,omitempty"`
	// Chain holds the encoded envelopes of the jobs to dispatch, in order,
	// after this one succeeds.
	Chain [][]byte `msgpack:"ch,omitempty"`
	// BatchID is the batch the job belongs to, if any.
	BatchID string `msgpack:"ba,omitempty"`
	// UniqueKey is the job's unique lock, if any.
	UniqueKey string `msgpack:"uk,omitempty"`
	// UniqueUntilProcessing releases the unique lock when the job starts
	// rather than when it finishes.
	UniqueUntilProcessing bool `msgpack:"up,omitempty"`
	// Encrypted says that Body is sealed with the engine's KeyRing. A
	// push seals the body of an envelope that says so and whose body is
	// not in the sealed form yet: one that PendingDispatch.Envelope
	// built, say.
	Encrypted bool `msgpack:"en,omitempty"`
	// Catch is the encoded callback that the job's chain runs when one of
	// its links fails for good; every link of the chain carries it.
	Catch []byte `msgpack:"cc,omitempty"`
	// Tags are free-form labels for monitoring.
	Tags []string `msgpack:"tg,omitempty"`
	// Headers carry context across the queue, such as the W3C trace
	// context (traceparent, tracestate, baggage) that a dispatch
	// middleware injects and a worker's middleware extracts. They are
	// kept through releases, retries and the failed store. Empty is left
	// out of the encoding, so payloads without headers are as before.
	Headers map[string]string `msgpack:"hd,omitempty"`
	// SchemaVersion is the version of the job's wire schema its body was
	// encoded with (the `version=` key of its //job: annotation); 0, left
	// out of the encoding, means 1. A worker upgrades a body of an older
	// version before the handler runs, and gives one of a newer version
	// back, unused, for a newer worker (docs/changing-jobs.md).
	SchemaVersion int `msgpack:"sv,omitempty"`
	// Step is set on a step of a workflow: which workflow and step it
	// is, what it needs, and, once released, its parents' results
	// (workflow.go). nil, left out of the encoding, for any other job.
	Step *EnvelopeStep `msgpack:"wf,omitempty"`
	// DispatchedAt is when the job was dispatched (unix ms, dispatcher's
	// clock). It is left out of the encoding when the ID tells it: an ID
	// from NewID begins with its time.
	DispatchedAt int64 `msgpack:"at"`
}

// EnvelopeStep is what a step of a workflow carries in its envelope.
type EnvelopeStep struct {
	// Workflow is the workflow's ID, Step the step's ID in it.
	Workflow string `msgpack:"w"`
	Step     string `msgpack:"s"`
	// Needs gives the step's needs in order: -1 for the result of one
	// step, n >= 0 for a list of n steps' results.
	Needs []int `msgpack:"n,omitempty"`
	// Inputs are the needed results, the needs' one after another, set
	// when the step is released; nil for a parent that left none.
	Inputs [][]byte `msgpack:"i,omitempty"`
	// Read is set on a step released without its inputs, because it
	// needs more than 1,000 results: it reads them from its workflow
	// when its handler asks for them.
	Read bool `msgpack:"r,omitempty"`
}

// Encode returns the envelope's msgpack encoding, complete in itself:
// it carries the ID and queue, as a link of a chain must. A push stores
// less (see EncodeStored).
func (e *Envelope) Encode() ([]byte, error) {
	e.Version = envelopeVersion
	b, err := msgpack.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode job %s (%s): %w", e.ID, e.Name, err)
	}
	return b, nil
}

// storedEnvelope encodes env as it is stored under its ID in the
// payloads hash of queue: without the ID, and without the queue when
// that is queue itself. A partition past the first is named apart from
// its queue, so the payloads it holds name the queue.
type storedEnvelope struct {
	env   *Envelope
	queue string
}

func (s storedEnvelope) EncodeMsgpack(enc *msgpack.Encoder) error {
	return s.env.encodeStoredForm(enc, s.env.Queue != s.queue)
}

// EncodeStored returns the payload to store for e in queue's keys, in
// the stored form (version 3).
func (e *Envelope) EncodeStored(queue string) ([]byte, error) {
	e.Version = storedVersion
	b, err := msgpack.Marshal(storedEnvelope{env: e, queue: queue})
	if err != nil {
		return nil, fmt.Errorf("encode job %s (%s): %w", e.ID, e.Name, err)
	}
	return b, nil
}

// DecodeEnvelope decodes the payload of job id, read from queue (for a
// partitioned queue, the partition's own name, as in Reservation.Queue).
// The envelope's ID is id and its queue is queue unless the payload names
// another. A truncated, foreign or unknown-version payload, or one
// carrying another ID, returns a *DecodeError carrying id; it never
// panics. Payloads written before version 3 (maps), and before version 2
// (which carry their ID and queue), decode all the same.
func DecodeEnvelope(queue, id string, payload []byte) (*Envelope, error) {
	e, carried, err := decodeEnvelope(payload)
	switch {
	case err != nil:
		return nil, &DecodeError{ID: id, Err: err}
	case carried.id && e.ID != id:
		return nil, &DecodeError{ID: id, Err: fmt.Errorf("envelope carries job ID %q", e.ID)}
	case !carried.id && e.Version != storedVersion:
		return nil, &DecodeError{ID: id, Err: errors.New("whole envelope carries no job ID (a payload from before the stored form?)")}
	}
	e.ID = id
	if !carried.queue {
		e.Queue = queue
	}
	e.impliedTime(carried)
	return e, nil
}

// carried records which of the fields that a version 2 payload may leave
// out it did hold.
type carried struct{ id, queue, at bool }

// impliedTime sets DispatchedAt from the ID when a version 2 payload left
// it out.
func (e *Envelope) impliedTime(c carried) {
	if !c.at && e.Version >= 2 {
		e.DispatchedAt, _ = idTime(e.ID)
	}
}

func decodeEnvelope(payload []byte) (env *Envelope, c carried, err error) {
	defer func() {
		if r := recover(); r != nil {
			env, err = nil, fmt.Errorf("panic in decoder: %v", r)
		}
	}()
	var e Envelope
	pd := getByteDecoder(payload)
	d := mpack.Decoder{Dec: pd.dec, Limit: len(payload)}
	// A stored form starts with the name, a string; the others are maps.
	stored := len(payload) > 0 && msgpcode.IsString(payload[0])
	if stored {
		c, err = e.decodeStoredForm(d)
		if err == nil && pd.rd.Len() > 0 {
			err = fmt.Errorf("%d bytes after the body", pd.rd.Len())
		}
	} else {
		c, err = e.decode(d)
	}
	pd.put() // not reached after a panic: that decoder is dropped
	if err != nil {
		return nil, c, err
	}
	switch {
	case stored && e.Version != storedVersion:
		return nil, c, fmt.Errorf("stored envelope version %d, want %d", e.Version, storedVersion)
	case !stored && e.Version != envelopeVersion:
		return nil, c, fmt.Errorf("envelope version %d, want %d (foreign payload?)", e.Version, envelopeVersion)
	case e.Name == "":
		return nil, c, errors.New("envelope has no job name")
	}
	return &e, c, nil
}

// crockford is the alphabet of job IDs: sortable, no I, L, O or U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns a new job ID: 26 characters, 48 bits of unix ms then 80
// random bits, so IDs sort by creation time.
func NewID() string { return newIDAt(time.Now().UnixMilli()) }

// newIDAt returns a new job ID made at unix ms.
func newIDAt(ms int64) string {
	var b [16]byte
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	// 128 bits -> 26 base32 digits, most significant first.
	var out [26]byte
	hi := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 | uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
	lo := uint64(b[8])<<56 | uint64(b[9])<<48 | uint64(b[10])<<40 | uint64(b[11])<<32 | uint64(b[12])<<24 | uint64(b[13])<<16 | uint64(b[14])<<8 | uint64(b[15])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// idTime returns the unix ms an ID from NewID begins with: its first ten
// digits, of which the first is at most 7 (128 bits in 130). ok is false
// for a string that cannot be such an ID.
func idTime(id string) (ms int64, ok bool) {
	if len(id) != 26 {
		return 0, false
	}
	for i := range 10 {
		d := strings.IndexByte(crockford, id[i])
		if d < 0 || i == 0 && d > 7 {
			return 0, false
		}
		ms = ms<<5 | int64(d)
	}
	return ms, true
}

// newNonce returns the random nonce a call records so that, sent again,
// it is recognised (a push in its queue's calls hash, an exception in
// its throttle's set): 96 bits, as 12 raw bytes rather than text, so
// that it fits Redis's 16-byte allocations (a 24-digit hex nonce takes
// 32). No reservation token (24 digits) has that length.
func newNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return string(b[:])
}

// newToken returns a random reservation token.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	const hex = "0123456789abcdef"
	out := make([]byte, 24)
	for i, c := range b {
		out[2*i], out[2*i+1] = hex[c>>4], hex[c&15]
	}
	return string(out)
}

// decodeLinkEnvelope decodes a chain link's envelope, which must carry its ID
// and queue (Encode writes them).
func decodeLinkEnvelope(payload []byte) (*Envelope, error) {
	e, c, err := decodeEnvelope(payload)
	if err == nil && (!c.id || !c.queue) {
		err = errors.New("the link carries no ID or queue")
	}
	if err != nil {
		return nil, err
	}
	e.impliedTime(c)
	return e, nil
}
