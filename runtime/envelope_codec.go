package runtime

import (
	"fmt"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
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
	w := encWriter{enc: enc}
	w.err = enc.EncodeMapLen(4 + o.count()) // v, id, n, b
	w.int("v", envelopeVersion)
	w.str("id", e.ID)
	w.str("n", e.Name)
	e.encodeHead(&w, o)
	w.key("b")
	w.do(func() error { return enc.EncodeBytes(e.Body) })
	e.encodeTail(&w, o)
	return w.err
}

// encodeStoredForm writes e in the stored form (version 3): its name, the
// map of its optional fields if it has any, its body. The queue is among
// the optional fields only if withQueue.
func (e *Envelope) encodeStoredForm(enc *msgpack.Encoder, withQueue bool) error {
	o := e.optional(withQueue)
	w := encWriter{enc: enc}
	w.err = enc.EncodeString(e.Name)
	if n := o.count(); n > 0 {
		w.do(func() error { return enc.EncodeMapLen(n) })
		e.encodeHead(&w, o)
		e.encodeTail(&w, o)
	}
	w.do(func() error { return enc.EncodeBytes(e.Body) })
	return w.err
}

// optionals says which of the fields that an encoding may leave out
// e writes.
type optionals [17]bool

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
)

func (e *Envelope) optional(withQueue bool) optionals {
	at, ok := idTime(e.ID)
	return optionals{
		withQueue, e.Connection != "", e.Tries != 0, len(e.Backoff) > 0, e.Timeout != 0, e.RetryUntil != 0,
		e.MaxExceptions != 0, e.FailOnTimeout, len(e.Chain) > 0, e.BatchID != "", e.UniqueKey != "", len(e.Tags) > 0,
		e.UniqueUntilProcessing, e.Encrypted, len(e.Catch) > 0,
		!ok || at != e.DispatchedAt, len(e.Headers) > 0,
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
func (e *Envelope) encodeHead(w *encWriter, o optionals) {
	if o[optQueue] {
		w.str("q", e.Queue)
	}
	if o[optConnection] {
		w.str("c", e.Connection)
	}
}

// encodeTail writes the optional fields that come after the body in the
// map form.
func (e *Envelope) encodeTail(w *encWriter, o optionals) {
	enc := w.enc
	if o[optTries] {
		w.int("t", int64(e.Tries))
	}
	if o[optBackoff] {
		w.key("bo")
		w.do(func() error { return enc.EncodeArrayLen(len(e.Backoff)) })
		for _, d := range e.Backoff {
			w.do(func() error { return enc.EncodeInt(int64(d)) })
		}
	}
	if o[optTimeout] {
		w.int("to", int64(e.Timeout))
	}
	if o[optRetryUntil] {
		w.int("ru", e.RetryUntil)
	}
	if o[optMaxExceptions] {
		w.int("me", int64(e.MaxExceptions))
	}
	if o[optFailOnTimeout] {
		w.key("ft")
		w.do(func() error { return enc.EncodeBool(true) })
	}
	if o[optChain] {
		w.key("ch")
		w.do(func() error { return enc.EncodeArrayLen(len(e.Chain)) })
		for _, link := range e.Chain {
			w.do(func() error { return enc.EncodeBytes(link) })
		}
	}
	if o[optBatch] {
		w.str("ba", e.BatchID)
	}
	if o[optUnique] {
		w.str("uk", e.UniqueKey)
	}
	if o[optTags] {
		w.key("tg")
		w.do(func() error { return enc.EncodeArrayLen(len(e.Tags)) })
		for _, t := range e.Tags {
			w.do(func() error { return enc.EncodeString(t) })
		}
	}
	if o[optUntilProcessing] {
		w.key("up")
		w.do(func() error { return enc.EncodeBool(true) })
	}
	if o[optEncrypted] {
		w.key("en")
		w.do(func() error { return enc.EncodeBool(true) })
	}
	if o[optCatch] {
		w.key("cc")
		w.do(func() error { return enc.EncodeBytes(e.Catch) })
	}
	if o[optAt] {
		w.int("at", e.DispatchedAt)
	}
	if o[optHeaders] {
		e.encodeHeaders(w)
	}
}

// encodeHeaders writes the headers as a map of strings, keys sorted so
// that the same envelope always encodes to the same bytes (a push made
// again must match the payload stored by the first).
func (e *Envelope) encodeHeaders(w *encWriter) {
	keys := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.key("hd")
	w.do(func() error { return w.enc.EncodeMapLen(len(keys)) })
	for _, k := range keys {
		w.str(k, e.Headers[k])
	}
}

// encWriter keeps the first error, so EncodeMsgpack reads straight.
type encWriter struct {
	enc *msgpack.Encoder
	err error
}

func (w *encWriter) do(f func() error) {
	if w.err == nil {
		w.err = f()
	}
}

func (w *encWriter) key(k string) { w.do(func() error { return w.enc.EncodeString(k) }) }

func (w *encWriter) str(k, v string) {
	w.key(k)
	w.do(func() error { return w.enc.EncodeString(v) })
}

func (w *encWriter) int(k string, v int64) {
	w.key(k)
	w.do(func() error { return w.enc.EncodeInt(v) })
}

// maxDecodedEnvelope bounds what one envelope read through DecodeMsgpack
// may claim; DecodeEnvelope holds claims to the payload's own size.
const maxDecodedEnvelope = 64 << 20

// DecodeMsgpack reads a map written by EncodeMsgpack, or by reflection
// from the struct tags. Unknown keys are skipped, so newer writers may
// add fields. A stored payload, which leaves out its ID, decodes with
// DecodeEnvelope.
func (e *Envelope) DecodeMsgpack(dec *msgpack.Decoder) error {
	c, err := e.decode(envDecoder{dec: dec, limit: maxDecodedEnvelope})
	if err == nil {
		e.impliedTime(c)
	}
	return err
}

// envDecoder reads strings, bytes and arrays whose claimed length is at
// most limit, the size of the payload: a garbage header claiming 4 GB
// fails at once instead of allocating it.
type envDecoder struct {
	dec   *msgpack.Decoder
	limit int
}

func (d envDecoder) length(n int, err error) (int, error) {
	if err == nil && n > d.limit {
		err = fmt.Errorf("a length of %d, more than the %d bytes of the payload", n, d.limit)
	}
	return n, err
}

func (d envDecoder) bytes() ([]byte, error) {
	n, err := d.length(d.dec.DecodeBytesLen())
	if err != nil || n < 0 {
		return nil, err
	}
	b := make([]byte, n)
	return b, d.dec.ReadFull(b)
}

func (d envDecoder) str() (string, error) {
	b, err := d.bytes()
	return string(b), err
}

func (e *Envelope) decode(d envDecoder) (carried, error) {
	var c carried
	n, err := d.length(d.dec.DecodeMapLen())
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
func (e *Envelope) decodeStoredForm(d envDecoder) (carried, error) {
	var c carried
	name, err := d.str()
	if err != nil {
		return c, fmt.Errorf("job name: %w", err)
	}
	*e = Envelope{}
	code, err := d.dec.PeekCode()
	if err != nil {
		return c, fmt.Errorf("body: %w", err)
	}
	if msgpcode.IsFixedMap(code) || code == msgpcode.Map16 || code == msgpcode.Map32 {
		n, err := d.length(d.dec.DecodeMapLen())
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
	if e.Body, err = d.bytes(); err != nil {
		return c, fmt.Errorf("body: %w", err)
	}
	return c, nil
}

// decodeFields reads n keys and their values into e.
func (e *Envelope) decodeFields(d envDecoder, n int, c *carried) error {
	for range n {
		k, err := d.str()
		if err != nil {
			return fmt.Errorf("envelope key: %w", err)
		}
		if err := e.decodeField(d, k, c); err != nil {
			return fmt.Errorf("envelope field %q: %w", k, err)
		}
	}
	return nil
}

func (e *Envelope) decodeField(d envDecoder, k string, c *carried) error {
	if ok, err := e.decodeHeadField(d, k, c); ok {
		return err
	}
	return e.decodeOptionField(d, k)
}

// decodeHeadField decodes a field that says what the job is and where it
// comes from, and says whether k is one.
func (e *Envelope) decodeHeadField(d envDecoder, k string, c *carried) (bool, error) {
	var err error
	switch k {
	case "v":
		var i int64
		i, err = d.dec.DecodeInt64()
		e.Version = int(i)
	case "id":
		e.ID, err = d.str()
		c.id = true
	case "n":
		e.Name, err = d.str()
	case "q":
		e.Queue, err = d.str()
		c.queue = true
	case "c":
		e.Connection, err = d.str()
	case "b":
		e.Body, err = d.bytes()
	case "at":
		e.DispatchedAt, err = d.dec.DecodeInt64()
		c.at = true
	case "hd":
		e.Headers, err = d.strMap()
	default:
		return false, nil
	}
	return true, err
}

// decodeOptionField decodes a dispatch option, or skips a field this
// version does not know.
func (e *Envelope) decodeOptionField(d envDecoder, k string) error {
	dec := d.dec
	var err error
	var i int64
	switch k {
	case "t":
		i, err = dec.DecodeInt64()
		e.Tries = int(i)
	case "bo":
		e.Backoff, err = decodeArray(d, func() (time.Duration, error) {
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
		e.Chain, err = decodeArray(d, d.bytes)
	case "ba":
		e.BatchID, err = d.str()
	case "uk":
		e.UniqueKey, err = d.str()
	case "tg":
		e.Tags, err = decodeArray(d, d.str)
	case "up":
		e.UniqueUntilProcessing, err = dec.DecodeBool()
	case "en":
		e.Encrypted, err = dec.DecodeBool()
	case "cc":
		e.Catch, err = d.bytes()
	default:
		err = d.skip(0)
	}
	return err
}

// maxSkipDepth bounds the nesting of an unknown field's value.
const maxSkipDepth = 32

// skip skips the value of an unknown key. Every length the value claims
// is held to the payload's size before anything is read: the decoder's
// own Skip reads a claimed length in chunks of up to a megabyte, which
// a few garbage bytes can make it allocate.
func (d envDecoder) skip(depth int) error {
	if depth > maxSkipDepth {
		return fmt.Errorf("a value nested more than %d deep", maxSkipDepth)
	}
	c, err := d.dec.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		return d.skipBytes(d.dec.DecodeBytesLen())
	case msgpcode.IsExt(c) || msgpcode.IsFixedExt(c):
		_, n, err := d.dec.DecodeExtHeader()
		return d.skipBytes(n, err)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		return d.skipValues(1, depth)(d.dec.DecodeArrayLen())
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return d.skipValues(2, depth)(d.dec.DecodeMapLen())
	}
	return d.dec.Skip() // nil, bool, numbers: a few bytes at most
}

// skipBytes drops the n bytes of a string, binary or ext value whose
// header was read with err.
func (d envDecoder) skipBytes(n int, err error) error {
	if n, err = d.length(n, err); err != nil {
		return err
	}
	return d.discard(n)
}

// skipValues returns a func that skips the values of an array (per 1) or
// a map (per 2) of n entries, whose header was read with err.
func (d envDecoder) skipValues(per, depth int) func(n int, err error) error {
	return func(n int, err error) error {
		if n, err = d.length(n, err); err != nil {
			return err
		}
		for range per * n {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
}

// discard reads and drops n bytes, n at most the payload's size.
func (d envDecoder) discard(n int) error {
	var buf [256]byte
	for n > 0 {
		k := min(n, len(buf))
		if err := d.dec.ReadFull(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// strMap reads a map of strings to strings; nil stays nil.
func (d envDecoder) strMap() (map[string]string, error) {
	n, err := d.length(d.dec.DecodeMapLen())
	if err != nil || n <= 0 {
		return nil, err
	}
	m := make(map[string]string, min(n, 64))
	for range n {
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if m[k], err = d.str(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func decodeArray[T any](d envDecoder, one func() (T, error)) ([]T, error) {
	n, err := d.length(d.dec.DecodeArrayLen())
	if err != nil || n <= 0 {
		return nil, err
	}
	out := make([]T, n)
	for i := range out {
		if out[i], err = one(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
