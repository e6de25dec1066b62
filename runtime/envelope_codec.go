package runtime

import (
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// The envelope is encoded by hand, as a msgpack map with the short keys
// of its struct tags, so reflection reads what it writes; at a fraction
// of the cost, since every job is decoded once per attempt. Empty
// optional fields are left out, and so are the ID, queue and dispatch
// time where the reader can tell them from elsewhere: every byte of a
// stored payload is kept in Redis for as long as the job waits.

var _ msgpack.CustomEncoder = (*Envelope)(nil)
var _ msgpack.CustomDecoder = (*Envelope)(nil)

// EncodeMsgpack writes e as a map, leaving out empty optional fields,
// and the dispatch time when the ID tells it.
func (e *Envelope) EncodeMsgpack(enc *msgpack.Encoder) error {
	return e.encode(enc, false, true)
}

// encode writes e as a map. A stored envelope leaves out its ID, and its
// queue unless withQueue. Version is always envelopeVersion.
func (e *Envelope) encode(enc *msgpack.Encoder, stored, withQueue bool) error {
	at, ok := idTime(e.ID)
	withAt := !ok || at != e.DispatchedAt
	opt := []bool{
		e.Connection != "", e.Tries != 0, len(e.Backoff) > 0, e.Timeout != 0, e.RetryUntil != 0,
		e.MaxExceptions != 0, e.FailOnTimeout, len(e.Chain) > 0, e.BatchID != "", e.UniqueKey != "", len(e.Tags) > 0,
		e.UniqueUntilProcessing, e.Encrypted, len(e.Catch) > 0,
		!stored, withQueue, withAt,
	}
	n := 3 // v, n, b
	for _, set := range opt {
		if set {
			n++
		}
	}
	w := encWriter{enc: enc}
	w.err = enc.EncodeMapLen(n)
	w.int("v", envelopeVersion)
	if !stored {
		w.str("id", e.ID)
	}
	w.str("n", e.Name)
	if withQueue {
		w.str("q", e.Queue)
	}
	if opt[0] {
		w.str("c", e.Connection)
	}
	w.key("b")
	w.do(func() error { return enc.EncodeBytes(e.Body) })
	if opt[1] {
		w.int("t", int64(e.Tries))
	}
	if opt[2] {
		w.key("bo")
		w.do(func() error { return enc.EncodeArrayLen(len(e.Backoff)) })
		for _, d := range e.Backoff {
			w.do(func() error { return enc.EncodeInt(int64(d)) })
		}
	}
	if opt[3] {
		w.int("to", int64(e.Timeout))
	}
	if opt[4] {
		w.int("ru", e.RetryUntil)
	}
	if opt[5] {
		w.int("me", int64(e.MaxExceptions))
	}
	if opt[6] {
		w.key("ft")
		w.do(func() error { return enc.EncodeBool(true) })
	}
	if opt[7] {
		w.key("ch")
		w.do(func() error { return enc.EncodeArrayLen(len(e.Chain)) })
		for _, link := range e.Chain {
			w.do(func() error { return enc.EncodeBytes(link) })
		}
	}
	if opt[8] {
		w.str("ba", e.BatchID)
	}
	if opt[9] {
		w.str("uk", e.UniqueKey)
	}
	if opt[10] {
		w.key("tg")
		w.do(func() error { return enc.EncodeArrayLen(len(e.Tags)) })
		for _, t := range e.Tags {
			w.do(func() error { return enc.EncodeString(t) })
		}
	}
	if opt[11] {
		w.key("up")
		w.do(func() error { return enc.EncodeBool(true) })
	}
	if opt[12] {
		w.key("en")
		w.do(func() error { return enc.EncodeBool(true) })
	}
	if opt[13] {
		w.key("cc")
		w.do(func() error { return enc.EncodeBytes(e.Catch) })
	}
	if withAt {
		w.int("at", e.DispatchedAt)
	}
	return w.err
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
	for range n {
		k, err := d.str()
		if err != nil {
			return c, fmt.Errorf("envelope key: %w", err)
		}
		if err := e.decodeField(d, k, &c); err != nil {
			return c, fmt.Errorf("envelope field %q: %w", k, err)
		}
	}
	return c, nil
}

func (e *Envelope) decodeField(d envDecoder, k string, c *carried) error {
	dec := d.dec
	var err error
	var i int64
	switch k {
	case "v":
		i, err = dec.DecodeInt64()
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
	case "at":
		e.DispatchedAt, err = dec.DecodeInt64()
		c.at = true
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
	var n int
	switch {
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		if n, err = d.length(d.dec.DecodeBytesLen()); err == nil {
			err = d.discard(n)
		}
	case msgpcode.IsExt(c) || msgpcode.IsFixedExt(c):
		if _, n, err = d.dec.DecodeExtHeader(); err == nil {
			if _, err = d.length(n, nil); err == nil {
				err = d.discard(n)
			}
		}
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		if n, err = d.length(d.dec.DecodeArrayLen()); err == nil {
			for range n {
				if err = d.skip(depth + 1); err != nil {
					break
				}
			}
		}
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		if n, err = d.length(d.dec.DecodeMapLen()); err == nil {
			for range 2 * n {
				if err = d.skip(depth + 1); err != nil {
					break
				}
			}
		}
	default: // nil, bool, numbers: a few bytes at most
		err = d.dec.Skip()
	}
	return err
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
