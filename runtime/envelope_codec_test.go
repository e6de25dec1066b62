package runtime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/runtime"
)

// mirror has Envelope's fields and tags but no codec methods, so msgpack
// encodes it by reflection.
type mirror struct {
	Version       int               `msgpack:"v"`
	ID            string            `msgpack:"id"`
	Name          string            `msgpack:"n"`
	Queue         string            `msgpack:"q"`
	Connection    string            `msgpack:"c,omitempty"`
	Body          []byte            `msgpack:"b"`
	Tries         int               `msgpack:"t,omitempty"`
	Backoff       []time.Duration   `msgpack:"bo,omitempty"`
	Timeout       time.Duration     `msgpack:"to,omitempty"`
	RetryUntil    int64             `msgpack:"ru,omitempty"`
	MaxExceptions int               `msgpack:"me,omitempty"`
	FailOnTimeout bool              `msgpack:"ft,omitempty"`
	Chain         [][]byte          `msgpack:"ch,omitempty"`
	BatchID       string            `msgpack:"ba,omitempty"`
	UniqueKey     string            `msgpack:"uk,omitempty"`
	UniqueUntil   bool              `msgpack:"up,omitempty"`
	Encrypted     bool              `msgpack:"en,omitempty"`
	Catch         []byte            `msgpack:"cc,omitempty"`
	Tags          []string          `msgpack:"tg,omitempty"`
	DispatchedAt  int64             `msgpack:"at"`
	Headers       map[string]string `msgpack:"hd,omitempty"`
	SchemaVersion int               `msgpack:"sv,omitempty"`
	Step          *mirrorStep       `msgpack:"wf,omitempty"`
	Future        string            `msgpack:"zz,omitempty"` // a field a newer writer might add
}

// mirrorStep is EnvelopeStep, encoded by reflection.
type mirrorStep struct {
	Workflow string   `msgpack:"w"`
	Step     string   `msgpack:"s"`
	Needs    []int    `msgpack:"n,omitempty"`
	Inputs   [][]byte `msgpack:"i,omitempty"`
	Future   string   `msgpack:"zz,omitempty"`
}

func TestEnvelopeCodec(t *testing.T) {
	full := runtime.Envelope{
		Version: 2, ID: "01J", Name: "app.Job", Queue: "q", Connection: "c", Body: []byte{1, 2, 3},
		Tries: 5, Backoff: []time.Duration{time.Second, time.Minute}, Timeout: 30 * time.Second,
		RetryUntil: 1_800_000_000_000, MaxExceptions: 3, FailOnTimeout: true,
		Chain: [][]byte{{9}, {8, 7}}, BatchID: "b1", UniqueKey: "u1", Tags: []string{"a", "b"},
		UniqueUntilProcessing: true, Encrypted: true, Catch: []byte{5, 6},
		DispatchedAt: 1_700_000_000_000, SchemaVersion: 3,
		Step:    &runtime.EnvelopeStep{Workflow: "w1", Step: "3", Needs: []int{-1, 2}, Inputs: [][]byte{{1}, nil, {2, 3}}},
		Headers: map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "baggage": "k=v"},
	}
	minimal := runtime.Envelope{Version: 2, ID: "01K", Name: "app.Job", Queue: "q", DispatchedAt: 1}
	for name, env := range map[string]runtime.Envelope{"full": full, "minimal": minimal} {
		t.Run(name, func(t *testing.T) {
			b, err := msgpack.Marshal(&env)
			require.NoError(t, err)
			var back runtime.Envelope
			require.NoError(t, msgpack.Unmarshal(b, &back))
			if env.Body == nil {
				env.Body = []byte{} // an empty body reads back empty, not nil
				back.Body = []byte{}
			}
			require.Equal(t, env, back)

			// The hand encoder writes what reflection would read...
			var m mirror
			require.NoError(t, msgpack.Unmarshal(b, &m))
			require.Equal(t, env.ID, m.ID)
			require.Equal(t, env.Backoff, m.Backoff)
			require.Equal(t, env.Chain, m.Chain)
			require.Equal(t, env.Tags, m.Tags)
			require.Equal(t, env.FailOnTimeout, m.FailOnTimeout)
			require.Equal(t, env.UniqueUntilProcessing, m.UniqueUntil)
			require.Equal(t, env.Encrypted, m.Encrypted)
			require.Equal(t, env.Catch, m.Catch)
			require.Equal(t, env.Headers, m.Headers)
			require.Equal(t, env.SchemaVersion, m.SchemaVersion)
			if env.Step != nil {
				require.Equal(t, runtime.EnvelopeStep{Workflow: m.Step.Workflow, Step: m.Step.Step, Needs: m.Step.Needs, Inputs: m.Step.Inputs}, *env.Step)
				m.Step.Future = "ignored"
			}

			// ...and reads what reflection writes, skipping unknown keys.
			m.Future = "ignored"
			rb, err := msgpack.Marshal(m)
			require.NoError(t, err)
			var fromReflect runtime.Envelope
			require.NoError(t, msgpack.Unmarshal(rb, &fromReflect))
			if len(fromReflect.Body) == 0 {
				fromReflect.Body = []byte{}
			}
			require.Equal(t, env, fromReflect)
		})
	}
}

func BenchmarkEnvelopeEncode(b *testing.B) {
	env := &runtime.Envelope{ID: "01J", Name: "app.Job", Queue: "q", Body: make([]byte, 128), Tries: 3, DispatchedAt: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelopeDecode(b *testing.B) {
	env := &runtime.Envelope{ID: "01J", Name: "app.Job", Queue: "q", Body: make([]byte, 128), Tries: 3, DispatchedAt: 1}
	payload, err := env.Encode()
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runtime.DecodeEnvelope("q", "01J", payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnvelopeDecodeStep decodes a workflow step's job as a
// parent's ack pushes it: its whole envelope, carrying its workflow and
// step.
func BenchmarkEnvelopeDecodeStep(b *testing.B) {
	id := runtime.NewID()
	env := &runtime.Envelope{ID: id, Name: "app.Child", Queue: "q", Body: make([]byte, 16),
		Step: &runtime.EnvelopeStep{Workflow: "{q}" + runtime.NewID(), Step: "c1234"}}
	payload, err := env.Encode()
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runtime.DecodeEnvelope("q", id, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeSkipsUnknownFields: a newer writer's fields, of any type, are
// skipped; one that claims more bytes than the payload has, or nests too
// deep, fails the decode.
func TestDecodeSkipsUnknownFields(t *testing.T) {
	deep := any("x")
	for range 40 {
		deep = []any{deep}
	}
	for name, tc := range map[string]struct {
		value any
		ok    bool
	}{
		"string": {"a newer field", true},
		"bytes":  {[]byte{1, 2, 3}, true},
		"nested": {map[string]any{"a": []any{1, "b", []byte{2}, map[string]any{"c": nil}}, "d": 1.5}, true},
		"time":   {time.UnixMilli(1_700_000_000_000), true}, // an ext value
		"deep":   {deep, false},
	} {
		t.Run(name, func(t *testing.T) {
			payload := mustMsgpack(t, map[string]any{"v": 2, "id": "A", "n": "app.Job", "b": []byte{7}, "zz": tc.value})
			env, err := runtime.DecodeEnvelope("q", "A", payload)
			if !tc.ok {
				require.ErrorIs(t, err, runtime.ErrDecode)
				return
			}
			require.NoError(t, err)
			require.Equal(t, []byte{7}, env.Body)
		})
	}
	// An unknown field whose ext header claims 800 MB, in 9 bytes.
	_, err := runtime.DecodeEnvelope("q", "A", []byte("\x86\xa10\xc90000\x01"))
	require.ErrorIs(t, err, runtime.ErrDecode)
	require.ErrorContains(t, err, "more than the 9 bytes of the payload")
}

// storedEnvelope is a dispatched job's envelope with a 128-byte body, and
// its payload as a push to its queue stores it.
func storedEnvelope(b *testing.B) (*runtime.Envelope, []byte) {
	env, err := runtime.NewPendingDispatch(job(1, runtime.JobOptions{Queue: "q", Tries: 3})).Envelope()
	require.NoError(b, err)
	env.Body = make([]byte, 128)
	payload, err := env.EncodeStored("q")
	require.NoError(b, err)
	return env, payload
}

func BenchmarkEnvelopeEncodeStored(b *testing.B) {
	env, _ := storedEnvelope(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.EncodeStored("q"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelopeDecodeStored(b *testing.B) {
	env, payload := storedEnvelope(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runtime.DecodeEnvelope("q", env.ID, payload); err != nil {
			b.Fatal(err)
		}
	}
}
