package runtime_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A job recorded from outside the engine's queues is listed like any
// failed job, recording it twice changes nothing, and Retry pushes it
// onto the engine's queue.
func TestFailedStoreRecord(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{FailedMaxCount: 2}, func(t *testing.T, b bundle) {
		store := runtime.NewInspector(b.engine).Failed()
		for i, id := range []string{"a", "b", "c"} {
			ok, err := store.Record(b.ctx, &runtime.Envelope{ID: id, Name: "foreign.Job", Queue: "foreign", Body: []byte{byte(i)}}, errors.New("boom "+id), i+1)
			require.NoError(t, err)
			require.True(t, ok)
		}
		ok, err := store.Record(b.ctx, &runtime.Envelope{ID: "c", Name: "foreign.Job", Queue: "foreign"}, errors.New("again"), 9)
		require.NoError(t, err)
		require.False(t, ok, "recorded already")

		list, err := store.List(b.ctx, "foreign", 0, 10)
		require.NoError(t, err)
		require.Len(t, list, 2, "trimmed to FailedMaxCount")
		c := list[0]
		require.Equal(t, "c", c.ID)
		require.Equal(t, "foreign.Job", c.Name)
		require.Equal(t, "boom c", c.Error)
		require.Equal(t, 3, c.Attempts)
		env, err := runtime.DecodeEnvelope(c.Queue, c.ID, c.Payload)
		require.NoError(t, err)
		require.Equal(t, []byte{2}, env.Body)

		done, err := store.Retry(b.ctx, "foreign", "c")
		require.NoError(t, err)
		require.Equal(t, []string{"c"}, done)
		batch := mustReserve(t, b, "foreign", 1)
		require.Len(t, batch.Jobs, 1)

		_, err = store.Record(b.ctx, &runtime.Envelope{Queue: "foreign"}, nil, 1)
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}
