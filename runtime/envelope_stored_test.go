package runtime_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/jobgen/jobgen/runtime"
)

// storedKeys returns the fields a payload holds: for a map (versions 1
// and 2), its keys and values; for the stored form (version 3), "n" and
// "b" for its name and body and the keys and values of the map of
// optional fields between them, which must end the payload.
func storedKeys(t *testing.T, payload []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if len(payload) == 0 || !msgpcode.IsString(payload[0]) {
		require.NoError(t, msgpack.Unmarshal(payload, &m))
		return m
	}
	r := bytes.NewReader(payload)
	dec := msgpack.NewDecoder(r)
	name, err := dec.DecodeString()
	require.NoError(t, err)
	c, err := dec.PeekCode()
	require.NoError(t, err)
	if msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32 {
		require.NoError(t, dec.Decode(&m))
		require.NotEmpty(t, m, "a stored payload writes no empty map")
	}
	body, err := dec.DecodeBytes()
	require.NoError(t, err)
	require.Zero(t, r.Len(), "the body ends the payload")
	m["n"], m["b"] = name, body
	return m
}

// TestStoredPayloadLeavesOutWhatItsPlaceTells: a pushed payload is in the
// stored form and holds neither its ID (the hash field) nor its queue (the
// key) nor, for an ID from NewID, its dispatch time (the ID's first
// digits); decoding from where it was read gives the envelope that was
// pushed.
func TestStoredPayloadLeavesOutWhatItsPlaceTells(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		plain := env("default", "app.Job", "plain")
		dated := env("default", "app.Job", "dated")
		dated.DispatchedAt = 1_700_000_000_000
		named := env("default", "app.Job", "named")
		named.ID = "order-42"
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: plain}, {Envelope: dated}, {Envelope: named}}))

		wantKeys := map[string][]string{
			plain.ID: {"n", "b"},
			dated.ID: {"n", "b", "at"},
			named.ID: {"n", "b", "at"},
		}
		for id, want := range wantKeys {
			p, err := b.rdb.HGet(b.ctx, b.prefix+":{default}:payloads", id).Bytes()
			require.NoError(t, err)
			m := storedKeys(t, p)
			require.ElementsMatch(t, want, keysOf(m), id)
			require.Equal(t, "app.Job", m["n"])
		}
		p, err := b.rdb.HGet(b.ctx, b.prefix+":{default}:payloads", plain.ID).Bytes()
		require.NoError(t, err)
		require.Equal(t, []byte("\xa7app.Job\xc4\x05plain"), p, "name and body, with no other byte than their lengths")

		batch := mustReserve(t, b, "default", 10)
		require.Len(t, batch.Jobs, 3)
		for i, want := range []*runtime.Envelope{plain, dated, named} {
			j := batch.Jobs[i]
			got, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, 3, got.Version)
		}
	})
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPartitionPayloadKeepsItsQueue: a job in a partition past the first
// is stored under the partition's name, which is not its queue's, so its
// payload names the queue.
func TestPartitionPayloadKeepsItsQueue(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{Partitions: map[string]int{"emails": 2}}, func(t *testing.T, b bundle) {
		a, c := env("emails", "app.Job", "a"), env("emails", "app.Job", "c")
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: a}, {Envelope: c}}))
		batch := mustReserve(t, b, "emails", 10)
		require.Len(t, batch.Jobs, 2)
		seen := map[string]bool{}
		for _, j := range batch.Jobs {
			seen[j.Queue] = true
			got, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
			require.NoError(t, err)
			require.Equal(t, "emails", got.Queue, "job in %s", j.Queue)
			_, named := storedKeys(t, j.Payload)["q"]
			require.Equal(t, j.Queue != "emails", named, "job in %s", j.Queue)
		}
		require.Len(t, seen, 2, "one job in each partition")
	})
}

// TestPayloadsOfOldVersionsAreRefused: no release ever wrote version 1
// envelopes, or version 2 maps without their ID, so such payloads are
// foreign: they fail to decode, and a worker fails the job at once.
func TestPayloadsOfOldVersionsAreRefused(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, j.Tag)
			return nil
		})
		body, err := runtime.Encode(testJob{Tag: "old"})
		require.NoError(t, err)
		v1ID := runtime.NewID()
		v1, err := msgpack.Marshal(mirror{Version: 1, ID: v1ID, Name: "test.Job", Queue: "legacy", Body: body, DispatchedAt: 1_700_000_000_000})
		require.NoError(t, err)
		v2ID := runtime.NewID()
		// A version 2 map with no ID: v, n, b, then the options set.
		v2 := []byte("\x84\xa1v\x02\xa1n\xa8test.Job\xa1b\xc4")
		v2 = append(v2, byte(len(body)))
		v2 = append(v2, body...)
		v2 = append(v2, "\xa1t\x03"...)

		qk := b.prefix + ":{legacy}:"
		for id, p := range map[string][]byte{v1ID: v1, v2ID: v2} {
			_, err := runtime.DecodeEnvelope("legacy", id, p)
			require.ErrorIs(t, err, runtime.ErrDecode)
			require.NoError(t, b.rdb.HSet(b.ctx, qk+"payloads", id, p).Err())
			require.NoError(t, b.rdb.RPush(b.ctx, qk+"ready", id).Err())
		}
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"legacy"}, StopWhenEmpty: true})
		require.Empty(t, rec.list())
		require.Len(t, b.failed(t, "legacy"), 2)
	})
}

// TestStoredFormRoundTrip: every field of an envelope survives the stored
// form, with the queue named or left out, and an envelope with nothing
// optional is its name and body alone.
func TestStoredFormRoundTrip(t *testing.T) {
	full := &runtime.Envelope{
		ID: runtime.NewID(), Name: "app.Job", Queue: "q", Connection: "c", Body: []byte{1, 2, 3},
		Tries: 5, Backoff: []time.Duration{time.Second, time.Minute}, Timeout: 30 * time.Second,
		RetryUntil: 1_800_000_000_000, MaxExceptions: 3, FailOnTimeout: true,
		Chain: [][]byte{{9}, {8, 7}}, BatchID: "b1", UniqueKey: "u1", Tags: []string{"a", "b"},
		UniqueUntilProcessing: true, Encrypted: true, Catch: []byte{5, 6},
		DispatchedAt: 1_700_000_000_000,
		Headers:      map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "baggage": "k=v"},
	}
	minimal := &runtime.Envelope{ID: runtime.NewID(), Name: "app.Job", Queue: "q", Body: make([]byte, 128)}
	minimal.DispatchedAt, _ = runtime.IDTime(minimal.ID)
	for name, tc := range map[string]struct {
		env       *runtime.Envelope
		storedIn  string
		wantQueue bool
	}{
		"full":                 {full, "q", false},
		"full, other queue":    {full, "q#2", true},
		"minimal":              {minimal, "q", false},
		"minimal, other queue": {minimal, "q#2", true},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := tc.env.EncodeStored(tc.storedIn)
			require.NoError(t, err)
			_, named := storedKeys(t, p)["q"]
			require.Equal(t, tc.wantQueue, named)
			got, err := runtime.DecodeEnvelope(tc.storedIn, tc.env.ID, p)
			require.NoError(t, err)
			require.Equal(t, tc.env, got)
			if tc.env == minimal && !tc.wantQueue {
				require.Len(t, p, 1+len("app.Job")+2+128, "name and body, with no other byte than their lengths")
			}
		})
	}
}

// TestStoredFormRefusals: a stored-form payload that is cut short, runs
// on past its body, repeats its name or body in its map, has no name or
// names another version fails to decode as the job whose ID it was read
// under.
func TestStoredFormRefusals(t *testing.T) {
	good := []byte("\xa7app.Job\xc4\x03abc")
	_, err := runtime.DecodeEnvelope("q", "A", good)
	require.NoError(t, err)
	for name, payload := range map[string][]byte{
		"body cut short":      good[:len(good)-1],
		"no body":             []byte("\xa7app.Job"),
		"name cut short":      []byte("\xa7app"),
		"a byte past":         append(bytes.Clone(good), 0),
		"empty name":          []byte("\xa0\xc4\x01x"),
		"name in the map":     []byte("\xa7app.Job\x81\xa1n\xa1x\xc4\x01x"),
		"body in the map":     []byte("\xa7app.Job\x81\xa1b\xc4\x01y\xc4\x01x"),
		"version 4":           []byte("\xa7app.Job\x81\xa1v\x04\xc4\x01x"),
		"version 2":           []byte("\xa7app.Job\x81\xa1v\x02\xc4\x01x"),
		"another ID":          []byte("\xa7app.Job\x81\xa2id\xa1B\xc4\x01x"),
		"map claims too much": []byte("\xa7app.Job\xdf\xff\xff\xff\xff"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runtime.DecodeEnvelope("q", "A", payload)
			var de *runtime.DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, "A", de.ID)
		})
	}
}

// TestDecodeEnvelopeIDs: a payload that names an ID must name the one it
// is stored under, and a version 1 payload must name one.
func TestDecodeEnvelopeIDs(t *testing.T) {
	v1, err := msgpack.Marshal(mirror{Version: 1, ID: "A", Name: "app.Job", Queue: "q"})
	require.NoError(t, err)
	v1NoID, err := msgpack.Marshal(map[string]any{"v": 1, "n": "app.Job", "q": "q", "b": []byte{}})
	require.NoError(t, err)
	v2, err := (&runtime.Envelope{ID: "A", Name: "app.Job", Queue: "q"}).Encode()
	require.NoError(t, err)
	v2NoID, err := msgpack.Marshal(map[string]any{"v": 2, "n": "app.Job", "b": []byte{}})
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		payload []byte
		ok      bool
		queue   string // the queue it decodes to, read from queue "here"
	}{
		"v1 own ID":     {v1, false, ""}, // no release wrote version 1
		"v1 no ID":      {v1NoID, false, ""},
		"v2 own ID":     {v2, true, "q"},
		"v2 no ID":      {v2NoID, false, ""}, // a whole envelope carries its ID
		"v3":            {mustMsgpack(t, map[string]any{"v": 3, "n": "app.Job"}), false, ""},
		"no version":    {mustMsgpack(t, map[string]any{"n": "app.Job"}), false, ""},
		"v2 no name":    {mustMsgpack(t, map[string]any{"v": 2}), false, ""},
		"v2 truncated":  {v2[:len(v2)-1], false, ""},
		"v2 nil map":    {[]byte{0xc0}, false, ""},
		"v2 empty body": {mustMsgpack(t, map[string]any{"v": 2, "id": "A", "n": "app.Job", "b": nil}), true, "here"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := runtime.DecodeEnvelope("here", "A", tc.payload)
			if !tc.ok {
				var de *runtime.DecodeError
				require.ErrorAs(t, err, &de)
				require.Equal(t, "A", de.ID)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "A", got.ID)
			require.Equal(t, tc.queue, got.Queue)

			_, err = runtime.DecodeEnvelope("here", "B", tc.payload)
			if _, carries := storedKeys(t, tc.payload)["id"]; carries {
				require.ErrorIs(t, err, runtime.ErrDecode, "a payload naming job A is refused as job B")
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// TestDispatchTimeFromID: a dispatched job's ID begins with its dispatch
// time, so no envelope of it writes the time, whole or stored, and every
// decode reads it back from the ID.
func TestDispatchTimeFromID(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		id, err := runtime.Chain(onQueue(1, "default"), onQueue(2, "next")).Dispatch(runtime.WithDispatcher(b.ctx, b.engine))
		require.NoError(t, err)

		j := mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, id, j.ID)
		require.NotContains(t, storedKeys(t, j.Payload), "at")
		got, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), time.UnixMilli(got.DispatchedAt), 5*time.Second)

		require.Len(t, got.Chain, 1)
		link := got.Chain[0]
		require.NotContains(t, storedKeys(t, link), "at")
		next, err := runtime.DecodeEnvelope("", idOf(t, link), link)
		require.NoError(t, err)
		require.Equal(t, got.DispatchedAt, next.DispatchedAt, "the chain's links are made at its dispatch")
	})
}
