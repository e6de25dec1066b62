package mpack

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func decoder(b []byte) Decoder {
	return Decoder{Dec: msgpack.NewDecoder(bytes.NewReader(b)), Limit: len(b)}
}

func TestWriterThenDecoder(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{Enc: msgpack.NewEncoder(&buf)}
	w.Do(func() error { return w.Enc.EncodeMapLen(2) })
	w.Str("s", "hello")
	w.Int("n", 42)
	require.NoError(t, w.Err)
	m, err := decoder(buf.Bytes()).StrMap()
	require.Error(t, err, "an int is no string")
	require.Nil(t, m)

	buf.Reset()
	w = &Writer{Enc: msgpack.NewEncoder(&buf)}
	w.Do(func() error { return w.Enc.EncodeMapLen(1) })
	w.Str("a", "b")
	require.NoError(t, w.Err)
	m, err = decoder(buf.Bytes()).StrMap()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "b"}, m)
}

func TestWriterKeepsTheFirstError(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{Enc: msgpack.NewEncoder(&buf)}
	first := errors.New("first")
	w.Do(func() error { return first })
	w.Str("k", "v")
	require.Equal(t, first, w.Err)
	require.Zero(t, buf.Len())
}

func TestDecoderHoldsLengthsToTheLimit(t *testing.T) {
	// A str32 header claiming 4 GB, with nothing after it.
	b := []byte{0xdb, 0xff, 0xff, 0xff, 0xff}
	_, err := decoder(b).Str()
	require.ErrorContains(t, err, "more than the 5 bytes")
	require.ErrorContains(t, decoder(b).Skip(), "more than the 5 bytes")
	// An array32 claiming 4G entries.
	_, err = Array(decoder([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}), func() (int, error) { return 0, nil })
	require.ErrorContains(t, err, "a length of")
}

func TestSkip(t *testing.T) {
	v := map[string]any{"a": []any{1, "x", map[string]any{"b": []byte("y")}}, "c": nil}
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	b = append(b, 0xa1, 'z') // a value after it
	d := decoder(b)
	require.NoError(t, d.Skip())
	s, err := d.Str()
	require.NoError(t, err)
	require.Equal(t, "z", s)

	deep := bytes.Repeat([]byte{0x91}, maxSkipDepth+2) // arrays of one, nested
	deep = append(deep, 0xc0)
	require.ErrorContains(t, decoder(deep).Skip(), "nested more than")
}

func TestStrReadsEachStringForm(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, want := range []string{"", "k", "id", strings.Repeat("y", 31), strings.Repeat("z", 200), long} {
		b, err := msgpack.Marshal(want)
		require.NoError(t, err)
		got, err := decoder(b).Str()
		require.NoError(t, err)
		require.Equal(t, want, got)
		bin, err := msgpack.Marshal([]byte(want))
		require.NoError(t, err)
		got, err = decoder(bin).Str()
		require.NoError(t, err)
		require.Equal(t, want, got, "as bin")
	}
	// A str8 header claiming more than follows fails, not pads.
	_, err := decoder([]byte{0xd9, 200, 'a', 'b'}).Str()
	require.Error(t, err)
}

func TestShortStrCostsOneAllocation(t *testing.T) {
	b, err := msgpack.Marshal("{emails}01JDXXXXXXXXXXXXXXXXXXXXXX.c12345")
	require.NoError(t, err)
	var rd bytes.Reader
	d := Decoder{Dec: msgpack.NewDecoder(&rd), Limit: len(b)}
	allocs := testing.AllocsPerRun(100, func() {
		rd.Reset(b)
		d.Dec.Reset(&rd)
		if _, err := d.Str(); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 1.0, allocs)
}
