package runtime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A delay already past (a negative one, computed from the clock) makes
// the job ready at once, as Laravel runs it, on every way in: Dispatch,
// an annotated delay, DispatchMany, PushMany and a chain's link.
func TestNegativeDelayIsReadyAtOnce(t *testing.T) {
	forEachFinishedBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle) {
		_, err := runtime.NewPendingDispatch(onQueue(1, "past")).Delay(-38 * time.Millisecond).Dispatch(b.ctx)
		require.NoError(t, err)
		_, err = runtime.Dispatch(b.ctx, job(2, runtime.JobOptions{Queue: "past", Delay: -time.Hour}))
		require.NoError(t, err)
		_, err = runtime.NewPendingMany([]testJob{onQueue(3, "past"), onQueue(4, "past")}).Delay(-time.Second).Dispatch(b.ctx)
		require.NoError(t, err)
		env, err := runtime.NewPendingDispatch(onQueue(5, "past")).Envelope()
		require.NoError(t, err)
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: env, Delay: -time.Minute}}))
		require.Equal(t, runtime.Sizes{Ready: 5}, sizes(t, b.bundle, "past"), "all ready, none delayed")
		for _, ev := range b.log.of(runtime.JobQueued) {
			require.GreaterOrEqual(t, ev.Delay, time.Duration(0), "JobQueued carries no negative delay")
		}
	})
}
