package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// TestHeadersEncodeTheSameEveryTime: an envelope's headers are written
// in key order, so a push made again stores the very same payload (Go
// ranges over a map in a different order each time); and they read back.
func TestHeadersEncodeTheSameEveryTime(t *testing.T) {
	env := &runtime.Envelope{ID: runtime.NewID(), Name: "app.Job", Queue: "q", Body: []byte{1},
		Headers: map[string]string{"traceparent": "00-a-b-01", "tracestate": "x=1", "baggage": "k=v", "jobgen-due": "1", "z": ""}}
	env.DispatchedAt, _ = runtime.IDTime(env.ID)
	first, err := env.EncodeStored("q")
	require.NoError(t, err)
	for range 20 {
		again, err := env.EncodeStored("q")
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
	got, err := runtime.DecodeEnvelope("q", env.ID, first)
	require.NoError(t, err)
	require.Equal(t, env.Headers, got.Headers)
}
