package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A held reservation counts no attempt until its job starts: a held job
// whose lease runs out, or that is given back, comes back with its count
// unchanged; one that started has used its attempt.
func TestHeldJobsCountTheirAttemptAtStart(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		broker := runtime.NewBroker(b.engine)
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{
			{Envelope: env("held", "app.Job", "never started")},
			{Envelope: env("held", "app.Job", "started")},
			{Envelope: env("held", "app.Job", "given back")},
		}))
		res, err := b.engine.ReserveHeld(b.ctx, "held", 3, 50*time.Millisecond)
		require.NoError(t, err)
		require.Len(t, res.Jobs, 3)
		for _, j := range res.Jobs {
			require.True(t, strings.HasPrefix(j.Token, "h"), "held under the held token")
			require.Equal(t, 1, j.Attempts, "the attempt it will start as")
		}
		never, started, back := res.Jobs[0], res.Jobs[1], res.Jobs[2]

		// Held, the job's lease is extended as any other's.
		lost, err := broker.Extend(b.ctx, 50*time.Millisecond, never.Ref, started.Ref)
		require.NoError(t, err)
		require.Empty(t, lost)

		got, ok, err := b.engine.Start(b.ctx, started)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 1, got.Attempts)
		require.False(t, strings.HasPrefix(got.Token, "h"))
		again, ok, err := b.engine.Start(b.ctx, started)
		require.NoError(t, err)
		require.True(t, ok, "a start made again finds the job started")
		require.Equal(t, 1, again.Attempts, "and counts it once")
		// The started job settles under its plain token only.
		lost, err = broker.Extend(b.ctx, 50*time.Millisecond, started.Ref)
		require.NoError(t, err)
		require.Len(t, lost, 1, "the held token no longer holds it")

		require.NoError(t, b.engine.Unreserve(b.ctx, back.Ref))

		// Both leases run out; the jobs come back.
		time.Sleep(80 * time.Millisecond)
		_, err = broker.Migrate(b.ctx, "held")
		require.NoError(t, err)
		_, ok, err = b.engine.Start(b.ctx, never)
		require.NoError(t, err)
		require.False(t, ok, "a held job whose lease ran out does not start")

		res, err = broker.Reserve(b.ctx, "held", 3, time.Minute)
		require.NoError(t, err)
		attempts := map[string]int{}
		for _, j := range res.Jobs {
			e, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
			require.NoError(t, err)
			attempts[string(e.Body)] = j.Attempts
		}
		require.Equal(t, map[string]int{"never started": 1, "started": 2, "given back": 1}, attempts)
	})
}
