package faults_test

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// FuzzDecodeEnvelope feeds runtime.DecodeEnvelope arbitrary payloads,
// under an ID that tells no time and under one from NewID, which does. It
// must never panic; it fails only with a *DecodeError for the right job;
// and what it accepts encodes back to bytes that decode to the same
// envelope.
func FuzzDecodeEnvelope(f *testing.F) {
	const id = "01JOBGENFUZZ0000000000000A"
	timed := runtime.NewID()
	seeds := []*runtime.Envelope{
		{ID: id, Name: "a.Job", Queue: "default", Body: []byte{0x80}, DispatchedAt: 1},
		{ID: id, Name: "mail.Send", Queue: "emails", Connection: "other", Body: []byte("x"), Tries: 5,
			Backoff: []time.Duration{time.Second, time.Minute}, Timeout: 30 * time.Second, RetryUntil: 1700000000000,
			MaxExceptions: 3, FailOnTimeout: true, Chain: [][]byte{{1, 2}, {3}}, BatchID: "b", UniqueKey: "u",
			Tags: []string{"t1", "t2"}, DispatchedAt: 1700000000000},
	}
	// An envelope with no "at", which the ID it carries tells.
	untimedPayload := append([]byte{0x83, 0xa1, 'v', 2, 0xa2, 'i', 'd', 0xa0 | byte(len(timed))}, timed...)
	untimedPayload = append(untimedPayload, 0xa1, 'n', 0xa1, 'x')
	untimed, err := runtime.DecodeEnvelope("default", timed, untimedPayload)
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, untimed)
	for _, env := range seeds {
		b, err := env.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(append(bytes.Clone(b), 0))
	}
	// The stored form (version 3): name, optional map, body.
	for _, b := range [][]byte{
		[]byte("\xa5a.Job\xc4\x01\x80"),
		[]byte("\xa5a.Job\x82\xa1t\x05\xa2ch\x91\xc4\x01\x01\xc4\x01x"),
	} {
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(append(bytes.Clone(b), 0))
	}
	f.Add([]byte{})
	f.Add([]byte{0xc1})
	f.Add([]byte(`{"uuid":"x","job":"Illuminate\\Queue\\CallQueuedHandler@call"}`))
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}) // a map that claims 4G entries
	f.Add([]byte{0x81, 0xa2, 'b', 'o', 0xdd, 0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, id := range []string{id, timed} {
			checkDecode(t, id, payload)
		}
	})
}

func checkDecode(t *testing.T, id string, payload []byte) {
	t.Helper()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	env, err := runtime.DecodeEnvelope("default", id, payload)
	goruntime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > allocBound(len(payload)) {
		t.Fatalf("decoding %d bytes allocated %d bytes", len(payload), n)
	}
	if err != nil {
		var de *runtime.DecodeError
		if !errors.As(err, &de) || de.ID != id || !errors.Is(err, runtime.ErrDecode) {
			t.Fatalf("error is not a *DecodeError for %s: %v", id, err)
		}
		return
	}
	if env.ID != id || env.Name == "" {
		t.Fatalf("accepted an envelope with ID %q and name %q", env.ID, env.Name)
	}
	b1, err := env.Encode()
	if err != nil {
		t.Fatalf("an accepted envelope does not encode: %v", err)
	}
	env2, err := runtime.DecodeEnvelope("default", id, b1)
	if err != nil {
		t.Fatalf("an accepted envelope, encoded again, does not decode: %v", err)
	}
	b2, err := env2.Encode()
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("encode/decode is not stable:\n%x\n%x (%v)", b1, b2, err)
	}
}

// allocBound is the most a decode of n bytes may allocate: a payload in
// Redis that claims a huge length must not make a worker allocate it.
func allocBound(n int) uint64 { return 1<<20 + 64*uint64(n) }

// TestDecodeEnvelopeBoundedAlloc decodes payloads of a few dozen bytes
// whose body claims a length of 4 GB (a msgpack bin32 or str32 header).
// The decoder must fail without allocating the claimed length: a single
// such payload in Redis would otherwise take a worker down for lack of
// memory, and a pooled decoder could keep the buffer.
func TestDecodeEnvelopeBoundedAlloc(t *testing.T) {
	const id = "01JOBGENFUZZ0000000000000A"
	for name, claim := range map[string][]byte{"bin32": {0xc6, 0xf0, 0, 0, 0}, "str32": {0xdb, 0xf0, 0, 0, 0}} {
		p := append([]byte{0x82, 0xa2, 'i', 'd', 0xda, 0x00, 26}, id...)
		p = append(append(p, 0xa1, 'b'), claim...)
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		_, err := runtime.DecodeEnvelope("default", id, p)
		goruntime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: a truncated payload decodes", name)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > allocBound(len(p)) {
			t.Errorf("%s: decoding %d bytes allocated %d MB", name, len(p), n>>20)
		}
	}
}
