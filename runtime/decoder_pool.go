package runtime

import (
	"bytes"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// byteDecoder is a msgpack decoder with the reader it reads from, pooled
// together: every job is decoded twice per attempt (its envelope, then
// its fields), and a fresh decoder and reader each time were two
// allocations of the four a decode made.
type byteDecoder struct {
	dec *msgpack.Decoder
	rd  bytes.Reader
}

var byteDecoders = sync.Pool{New: func() any { return &byteDecoder{dec: msgpack.NewDecoder(nil)} }}

// getByteDecoder returns a pooled decoder reading b, with default
// options. Give it back with put once done; it must not be used after.
func getByteDecoder(b []byte) *byteDecoder {
	d := byteDecoders.Get().(*byteDecoder)
	d.rd.Reset(b)
	d.dec.Reset(&d.rd)
	return d
}

func (d *byteDecoder) put() {
	d.rd.Reset(nil)
	d.dec.Reset(nil)
	byteDecoders.Put(d)
}

// decodePooled decodes msgpack b into a T with a pooled decoder, as
// msgpack.Unmarshal does. Generic, so that the call reaches the decoder
// with no frame of its own in between: a job's handler goroutine runs it
// on a small stack.
func decodePooled[T any](b []byte) (T, error) {
	var v T
	d := getByteDecoder(b)
	d.dec.UsePreallocateValues(true) // as msgpack.Unmarshal
	err := d.dec.Decode(&v)
	d.put()
	return v, err
}
