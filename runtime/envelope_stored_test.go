package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/runtime"
)

// storedKeys returns the keys of the map a stored payload holds.
func storedKeys(t *testing.T, payload []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(payload, &m))
	return m
}

// TestStoredPayloadLeavesOutWhatItsPlaceTells: a pushed payload holds
// neither its ID (the hash field) nor its queue (the key) nor, for an ID
// from NewID, its dispatch time (the ID's first digits); decoding from
// where it was read gives the envelope that was pushed.
func TestStoredPayloadLeavesOutWhatItsPlaceTells(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		plain := env("default", "app.Job", "plain")
		dated := env("default", "app.Job", "dated")
		dated.DispatchedAt = 1_700_000_000_000
		named := env("default", "app.Job", "named")
		named.ID = "order-42"
		require.NoError(t, b.engine.PushBulk(b.ctx, []runtime.Outgoing{{Envelope: plain}, {Envelope: dated}, {Envelope: named}}))

		wantKeys := map[string][]string{
			plain.ID: {"v", "n", "b"},
			dated.ID: {"v", "n", "b", "at"},
			named.ID: {"v", "n", "b", "at"},
		}
		for id, want := range wantKeys {
			p, err := b.rdb.HGet(b.ctx, b.prefix+":{default}:payloads", id).Bytes()
			require.NoError(t, err)
			m := storedKeys(t, p)
			require.ElementsMatch(t, want, keysOf(m), id)
			require.EqualValues(t, 2, m["v"])
		}

		batch := mustReserve(t, b, "default", 10)
		require.Len(t, batch.Jobs, 3)
		for i, want := range []*runtime.Envelope{plain, dated, named} {
			j := batch.Jobs[i]
			got, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
			require.NoError(t, err)
			require.Equal(t, want, got)
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
		require.NoError(t, b.engine.PushBulk(b.ctx, []runtime.Outgoing{{Envelope: a}, {Envelope: c}}))
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

// TestVersion1PayloadsStillRun: payloads written before version 2 carry
// their ID, queue and dispatch time; jobs left in Redis across an
// upgrade decode and run.
func TestVersion1PayloadsStillRun(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec recorder
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, j.Tag)
			return nil
		})
		body, err := runtime.Encode(testJob{Tag: "old"})
		require.NoError(t, err)
		const id = "01HZZZZZZZ0000000000000001"
		old, err := msgpack.Marshal(mirror{Version: 1, ID: id, Name: "test.Job", Queue: "legacy", Body: body, DispatchedAt: 1_700_000_000_000})
		require.NoError(t, err)
		qk := b.prefix + ":{legacy}:"
		require.NoError(t, b.rdb.HSet(b.ctx, qk+"payloads", id, old).Err())
		require.NoError(t, b.rdb.RPush(b.ctx, qk+"ready", id).Err())

		got, err := runtime.DecodeEnvelope("legacy", id, old)
		require.NoError(t, err)
		require.Equal(t, &runtime.Envelope{Version: 1, ID: id, Name: "test.Job", Queue: "legacy", Body: body, DispatchedAt: 1_700_000_000_000}, got)

		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"legacy"}, StopWhenEmpty: true})
		require.Equal(t, []string{"old"}, rec.list())
		require.Equal(t, id, rec.infos()[0].ID)
		require.Equal(t, "legacy", rec.infos()[0].Queue)
		require.Empty(t, b.failed(t, "legacy"))
	})
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
		"v1 own ID":     {v1, true, "q"},
		"v1 no ID":      {v1NoID, false, ""},
		"v2 own ID":     {v2, true, "q"},
		"v2 no ID":      {v2NoID, true, "here"},
		"v3":            {mustMsgpack(t, map[string]any{"v": 3, "n": "app.Job"}), false, ""},
		"no version":    {mustMsgpack(t, map[string]any{"n": "app.Job"}), false, ""},
		"v2 no name":    {mustMsgpack(t, map[string]any{"v": 2}), false, ""},
		"v2 truncated":  {v2[:len(v2)-1], false, ""},
		"v2 nil map":    {[]byte{0xc0}, false, ""},
		"v2 empty body": {mustMsgpack(t, map[string]any{"v": 2, "n": "app.Job", "b": nil}), true, "here"},
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
