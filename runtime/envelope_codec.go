package runtime

import (
	"fmt"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/jobgen/jobgen/internal/mpack"
)

// The envelope is encoded by hand, as a msgpack map with the short keys
// of its struct tags, so reflection reads what it writes; at a fraction
// of the cost, since every job is decoded once per attempt. Empty
// optional fields are left out, and so is the dispatch time where the ID
// tells it.
//
// A payload stored under a queue has a form of its own (version 3), as
// short as it can be, since every byte of it is kept in Redis for as long
// as the job waits: the job name as a msgpack string, then, only if any
// is set, a map of the optional fields with the same short keys, then
// the body as msgpack bin, ending the payload. It leaves out the ID,
// which is its hash field, and the queue when that is the queue whose
// keys hold it. A map starts every version 1 and 2 payload, and a string
// starts every version 3 one, so the first byte tells them apart.

var _ msgpack.CustomEncoder = (*Envelope)(nil)
var _ msgpack.CustomDecoder = (*Envelope)(nil)

// EncodeMsgpack writes e whole, as a version 2 map, leaving out empty
// optional fields, and the dispatch time when the ID tells it.
func (e *Envelope) EncodeMsgpack(enc *msgpack.Encoder) error {
	o := e.optional(true)
	w := mpack.Writer{Enc: enc}
	w.Err = enc.EncodeMapLen(4 + o.count()) // v, id, n, b
	w.Int("v", envelopeVersion)
	w.Str("id", e.ID)
	w.Str("n", e.Name)
	e.encodeHead(&w, o)
	w.Key("b")
	w.Do(func() error { return enc.EncodeBytes(e.Body) })
	e.encodeTail(&w, o)
	return w.Err
}

// encodeStoredForm writes e in the stored form (version 3): its name, the
// map of its optional fields if it has any, its body. The queue is among
// the optional fields only if withQueue.
func (e *Envelope) encodeStoredForm(enc *msgpack.Encoder, withQueue bool) error {
	o := e.optional(withQueue)
	w := mpack.Writer{Enc: enc}
	w.Err = enc.EncodeString(e.Name)
	if n := o.count(); n > 0 {
		w.Do(func() error { return enc.EncodeMapLen(n) })
		e.encodeHead(&w, o)
		e.encodeTail(&w, o)
	}
	w.Do(func() error { return enc.EncodeBytes(e.Body) })
	return w.Err
}

// optionals says which of the fields that an encoding may leave out
// e writes.
type optionals [19]bool

// The fields of optionals, in the order they are written.
const (
	optQueue = iota
	optConnection
	optTries
	optBackoff
	optTimeout
	optRetryUntil
	optMaxExceptions
	optFailOnTimeout
	optChain
	optBatch
	optUnique
	optTags
	optUntilProcessing
	optEncrypted
	optCatch
	optAt
	optHeaders
	optSchemaVersion
	optStep
)

func (e *Envelope) optional(withQueue bool) optionals {
	at, ok := idTime(e.ID)
	return optionals{
		withQueue, e.Connection != "", e.Tries != 0, len(e.Backoff) > 0, e.Timeout != 0, e.RetryUntil != 0,
		e.MaxExceptions != 0, e.FailOnTimeout, len(e.Chain) > 0, e.BatchID != "", e.UniqueKey != "", len(e.Tags) > 0,
		e.UniqueUntilProcessing, e.Encrypted, len(e.Catch) > 0,
		!ok || at != e.DispatchedAt, len(e.Headers) > 0, e.SchemaVersion > 1, e.Step != nil,
	}
}

func (o optionals) count() int {
	n := 0
	for _, set := range o {
		if set {
			n++
		}
	}
	return n
}

// encodeHead writes the optional fields that come before the body in
// the map form: queue and connection.
func (e *Envelope) encodeHead(w *mpack.Writer, o optionals) {
	if o[optQueue] {
		w.Str("q", e.Queue)
	}
	if o[optConnection] {
		w.Str("c", e.Connection)
	}
}

// encodeTail writes the optional fields that come after the body in the
// map form.
func (e *Envelope) encodeTail(w *mpack.Writer, o optionals) {
	enc := w.Enc
	if o[optTries] {
		w.Int("t", int64(e.Tries))
	}
	if o[optBackoff] {
		w.Key("bo")
		w.Do(func() error { return enc.EncodeArrayLen(len(e.Backoff)) })
		for _, d := range e.Backoff {
			w.Do(func() error { return enc.EncodeInt(int64(d)) })
		}
	}
	if o[optTimeout] {
		w.Int("to", int64(e.Timeout))
	}
	if o[optRetryUntil] {
		w.Int("ru", e.RetryUntil)
	}
	if o[optMaxExceptions] {
		w.Int("me", int64(e.MaxExceptions))
	}
	if o[optFailOnTimeout] {
		w.Key("ft")
		w.Do(func() error { return enc.EncodeBool(true) })
	}
	if o[optChain] {
		w.Key("ch")
		w.Do(func() error { return enc.EncodeArrayLen(len(e.Chain)) })
		for _, link := range e.Chain {
			w.Do(func() error { return enc.EncodeBytes(link) })
		}
	}
	if o[optBatch] {
		w.Str("ba", e.BatchID)
	}
	if o[optUnique] {
		w.Str("uk", e.UniqueKey)
	}
	if o[optTags] {
		w.Key("tg")
		w.Do(func() error { return enc.EncodeArrayLen(len(e.Tags)) })
		for _, t := range e.Tags {
			w.Do(func() error { return enc.EncodeString(t) })
		}
	}
	if o[optUntilProcessing] {
		w.Key("up")
		w.Do(func() error { return enc.EncodeBool(true) })
	}
	if o[optEncrypted] {
		w.Key("en")
		w.Do(func() error { return enc.EncodeBool(true) })
	}
	if o[optCatch] {
		w.Key("cc")
		w.Do(func() error { return enc.EncodeBytes(e.Catch) })
	}
	if o[optAt] {
		w.Int("at", e.DispatchedAt)
	}
	if o[optHeaders] {
		e.encodeHeaders(w)
	}
	if o[optSchemaVersion] {
		w.Int("sv", int64(e.SchemaVersion))
	}
	if o[optStep] {
		w.Key("wf")
		w.Do(func() error { return enc.Encode(e.Step) })
	}
}

// encodeHeaders writes the headers as a map of strings, keys sorted so
// that the same envelope always encodes to the same bytes (a push made
// again must match the payload stored by the first).
func (e *Envelope) encodeHeaders(w *mpack.Writer) {
	keys := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.Key("hd")
	w.Do(func() error { return w.Enc.EncodeMapLen(len(keys)) })
	for _, k := range keys {
		w.Str(k, e.Headers[k])
	}
}

// maxDecodedEnvelope bounds what one envelope read through DecodeMsgpack
// may claim; DecodeEnvelope holds claims to the payload's own size.
const maxDecodedEnvelope = 64 << 20

// DecodeMsgpack reads a map written by EncodeMsgpack, or by reflection
// from the struct tags. Unknown keys are skipped, so newer writers may
// add fields. A stored payload, which leaves out its ID, decodes with
// DecodeEnvelope.
func (e *Envelope) DecodeMsgpack(dec *msgpack.Decoder) error {
	c, err := e.decode(mpack.Decoder{Dec: dec, Limit: maxDecodedEnvelope})
	if err == nil {
		e.impliedTime(c)
	}
	return err
}

func (e *Envelope) decode(d mpack.Decoder) (carried, error) {
	var c carried
	n, err := d.Length(d.Dec.DecodeMapLen())
	if err != nil {
		return c, err
	}
	if n < 0 {
		return c, fmt.Errorf("envelope is nil")
	}
	*e = Envelope{}
	return c, e.decodeFields(d, n, &c)
}

// decodeStoredForm reads a payload in the stored form (version 3) up to
// the end of its body.
func (e *Envelope) decodeStoredForm(d mpack.Decoder) (carried, error) {
	var c carried
	name, err := d.Str()
	if err != nil {
		return c, fmt.Errorf("job name: %w", err)
	}
	*e = Envelope{}
	code, err := d.Dec.PeekCode()
	if err != nil {
		return c, fmt.Errorf("body: %w", err)
	}
	if msgpcode.IsFixedMap(code) || code == msgpcode.Map16 || code == msgpcode.Map32 {
		n, err := d.Length(d.Dec.DecodeMapLen())
		if err == nil {
			err = e.decodeFields(d, n, &c)
		}
		if err != nil {
			return c, err
		}
		if e.Name != "" || e.Body != nil {
			return c, fmt.Errorf("the map of a stored envelope holds its name or body")
		}
	}
	if e.Version == 0 {
		e.Version = storedVersion
	}
	e.Name = name
	if e.Body, err = d.Bytes(); err != nil {
		return c, fmt.Errorf("body: %w", err)
	}
	return c, nil
}

// decodeFields reads n keys and their values into e.
func (e *Envelope) decodeFields(d mpack.Decoder, n int, c *carried) error {
	for range n {
		k, err := d.Str()
		if err != nil {
			return fmt.Errorf("envelope key: %w", err)
		}
		if err := e.decodeField(d, k, c); err != nil {
			return fmt.Errorf("envelope field %q: %w", k, err)
		}
	}
	return nil
}

func (e *Envelope) decodeField(d mpack.Decoder, k string, c *carried) error {
	if ok, err := e.decodeHeadField(d, k, c); ok {
		return err
	}
	return e.decodeOptionField(d, k)
}

// decodeHeadField decodes a field that says what the job is and where it
// comes from, and says whether k is one.
func (e *Envelope) decodeHeadField(d mpack.Decoder, k string, c *carried) (bool, error) {
	var err error
	switch k {
	case "v":
		var i int64
		i, err = d.Dec.DecodeInt64()
		e.Version = int(i)
	case "id":
		e.ID, err = d.Str()
		c.id = true
	case "n":
		e.Name, err = d.Str()
	case "q":
		e.Queue, err = d.Str()
		c.queue = true
	case "c":
		e.Connection, err = d.Str()
	case "b":
		e.Body, err = d.Bytes()
	case "at":
		e.DispatchedAt, err = d.Dec.DecodeInt64()
		c.at = true
	case "hd":
		e.Headers, err = d.StrMap()
	default:
		return false, nil
	}
	return true, err
}

// decodeOptionField decodes a dispatch option, or skips a field this
// version does not know.
func (e *Envelope) decodeOptionField(d mpack.Decoder, k string) error {
	dec := d.Dec
	var err error
	var i int64
	switch k {
	case "t":
		i, err = dec.DecodeInt64()
		e.Tries = int(i)
	case "bo":
		e.Backoff, err = mpack.Array(d, func() (time.Duration, error) {
			d, err := dec.DecodeInt64()
			return time.Duration(d), err
		})
	case "to":
		i, err = dec.DecodeInt64()
		e.Timeout = time.Duration(i)
	case "ru":
		e.RetryUntil, err = dec.DecodeInt64()
	case "me":
		i, err = dec.DecodeInt64()
		e.MaxExceptions = int(i)
	case "ft":
		e.FailOnTimeout, err = dec.DecodeBool()
	case "ch":
		e.Chain, err = mpack.Array(d, d.Bytes)
	case "ba":
		e.BatchID, err = d.Str()
	case "uk":
		e.UniqueKey, err = d.Str()
	case "tg":
		e.Tags, err = mpack.Array(d, d.Str)
	case "up":
		e.UniqueUntilProcessing, err = dec.DecodeBool()
	case "en":
		e.Encrypted, err = dec.DecodeBool()
	case "cc":
		e.Catch, err = d.Bytes()
	case "sv":
		i, err = dec.DecodeInt64()
		e.SchemaVersion = int(i)
	case "wf":
		e.Step, err = decodeStep(d)
	default:
		err = d.Skip()
	}
	return err
}

// decodeStep reads a step's field (EnvelopeStep, as msgpack encodes the
// struct: a map of its tags) by hand, as the worker does for every step
// it takes.
func decodeStep(d mpack.Decoder) (*EnvelopeStep, error) {
	s := new(EnvelopeStep)
	n, err := d.Length(d.Dec.DecodeMapLen())
	if err != nil || n <= 0 {
		return s, err
	}
	for range n {
		k, err := d.Str()
		if err != nil {
			return nil, err
		}
		switch k {
		case "w":
			s.Workflow, err = d.Str()
		case "s":
			s.Step, err = d.Str()
		case "n":
			s.Needs, err = mpack.Array(d, d.Dec.DecodeInt)
		case "i":
			s.Inputs, err = mpack.Array(d, d.Bytes)
		case "r":
			s.Read, err = d.Dec.DecodeBool()
		default:
			err = d.Skip()
		}
		if err != nil {
			return nil, fmt.Errorf("its step's %q: %w", k, err)
		}
	}
	return s, nil
}
