// Package mpack reads and writes msgpack by hand, for the envelope's
// codec in runtime: a Writer that keeps the first error, and a Decoder
// that holds every length a value claims to a limit (the payload's
// size) before it allocates or reads it, and skips unknown values to a
// bounded depth, so that a few garbage bytes cannot make it allocate
// gigabytes or recurse without end.
package mpack

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Writer writes a map's keys and values and keeps the first error, so
// an encoder reads straight.
type Writer struct {
	Enc *msgpack.Encoder
	Err error
}

// Do runs f unless an earlier call failed.
func (w *Writer) Do(f func() error) {
	if w.Err == nil {
		w.Err = f()
	}
}

// Key writes a map's key.
func (w *Writer) Key(k string) { w.Do(func() error { return w.Enc.EncodeString(k) }) }

// Str writes a key and its string value.
func (w *Writer) Str(k, v string) {
	w.Key(k)
	w.Do(func() error { return w.Enc.EncodeString(v) })
}

// Int writes a key and its integer value.
func (w *Writer) Int(k string, v int64) {
	w.Key(k)
	w.Do(func() error { return w.Enc.EncodeInt(v) })
}

// Decoder reads strings, bytes and arrays whose claimed length is at
// most limit, the size of the payload: a garbage header claiming 4 GB
// fails at once instead of allocating it.
type Decoder struct {
	Dec   *msgpack.Decoder
	Limit int
}

// Length holds n, a length read with err, to the limit.
func (d Decoder) Length(n int, err error) (int, error) {
	if err == nil && n > d.Limit {
		err = fmt.Errorf("a length of %d, more than the %d bytes of the payload", n, d.Limit)
	}
	return n, err
}

// Bytes reads a string or binary value; nil stays nil.
func (d Decoder) Bytes() ([]byte, error) {
	n, err := d.Length(d.Dec.DecodeBytesLen())
	if err != nil || n < 0 {
		return nil, err
	}
	b := make([]byte, n)
	return b, d.Dec.ReadFull(b)
}

// Str reads a string or binary value as a string. A string of at most
// 255 bytes (keys, IDs, names) is read through the decoder's own buffer:
// one allocation, the string, where a buffer of its own and then the
// string were two (none for one byte). Its header bounds its length.
func (d Decoder) Str() (string, error) {
	if c, err := d.Dec.PeekCode(); err == nil && (msgpcode.IsFixedString(c) || c == msgpcode.Str8) {
		return d.Dec.DecodeString()
	}
	b, err := d.Bytes()
	return string(b), err
}

// Skip skips the next value, such as that of an unknown key.
func (d Decoder) Skip() error { return d.skip(0) }

// maxSkipDepth bounds the nesting of an unknown field's value.
const maxSkipDepth = 32

// skip skips a value. Every length the value claims
// is held to the payload's size before anything is read: the decoder's
// own Skip reads a claimed length in chunks of up to a megabyte, which
// a few garbage bytes can make it allocate.
func (d Decoder) skip(depth int) error {
	if depth > maxSkipDepth {
		return fmt.Errorf("a value nested more than %d deep", maxSkipDepth)
	}
	c, err := d.Dec.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		return d.skipBytes(d.Dec.DecodeBytesLen())
	case msgpcode.IsExt(c) || msgpcode.IsFixedExt(c):
		_, n, err := d.Dec.DecodeExtHeader()
		return d.skipBytes(n, err)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		return d.skipValues(1, depth)(d.Dec.DecodeArrayLen())
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return d.skipValues(2, depth)(d.Dec.DecodeMapLen())
	}
	return d.Dec.Skip() // nil, bool, numbers: a few bytes at most
}

// skipBytes drops the n bytes of a string, binary or ext value whose
// header was read with err.
func (d Decoder) skipBytes(n int, err error) error {
	if n, err = d.Length(n, err); err != nil {
		return err
	}
	return d.discard(n)
}

// skipValues returns a func that skips the values of an array (per 1) or
// a map (per 2) of n entries, whose header was read with err.
func (d Decoder) skipValues(per, depth int) func(n int, err error) error {
	return func(n int, err error) error {
		if n, err = d.Length(n, err); err != nil {
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
func (d Decoder) discard(n int) error {
	var buf [256]byte
	for n > 0 {
		k := min(n, len(buf))
		if err := d.Dec.ReadFull(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// StrMap reads a map of strings to strings; nil stays nil.
func (d Decoder) StrMap() (map[string]string, error) {
	n, err := d.Length(d.Dec.DecodeMapLen())
	if err != nil || n <= 0 {
		return nil, err
	}
	m := make(map[string]string, min(n, 64))
	for range n {
		k, err := d.Str()
		if err != nil {
			return nil, err
		}
		if m[k], err = d.Str(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Array reads an array, each element with one; nil stays nil.
func Array[T any](d Decoder, one func() (T, error)) ([]T, error) {
	n, err := d.Length(d.Dec.DecodeArrayLen())
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
