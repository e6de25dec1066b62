package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// A reserve whose reply is lost for good (every retry's reply dropped
// too, as when Redis dies right after it ran the call) fails; the jobs
// it reserved are given back by the engine's next reserve, their attempt
// unused, rather than wait for their lease and, with one try, go to the
// failed store unrun. It used to leave them reserved until the lease ran
// out.
func TestReserveGivesBackJobsOfALostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxy := newReplyDropper(t, redistest.Addr(t), runtime.ScriptSHA("reserve"))
	e, err := runtime.Open(ctx, "redis://"+proxy.addr(), runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	br, in := runtime.NewBroker(e), runtime.NewInspector(e)
	var ids []string
	for i := range 3 {
		env := env("mail", "app.Job", fmt.Sprint(i))
		require.NoError(t, e.Push(ctx, env))
		ids = append(ids, env.ID)
	}

	proxy.armed.Store(true)
	_, err = br.Reserve(ctx, "mail", 2, time.Minute)
	require.Error(t, err, "every reply of the reserve was dropped")
	require.Positive(t, proxy.dropped.Load())
	s, err := in.Sizes(ctx, "mail")
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Ready: 1, Reserved: 2}, s, "Redis ran the reserve")
	proxy.armed.Store(false)

	got, err := br.Reserve(ctx, "mail", 3, time.Minute)
	require.NoError(t, err)
	require.Len(t, got.Jobs, 3, "the jobs of the lost reply are back")
	var gotIDs []string
	var refs []runtime.Ref
	for _, j := range got.Jobs {
		gotIDs = append(gotIDs, j.ID)
		refs = append(refs, j.Ref)
		require.Equal(t, 1, j.Attempts, "job %s: the lost reserve used no attempt", j.ID)
	}
	require.ElementsMatch(t, ids, gotIDs)
	require.NoError(t, br.Ack(ctx, refs...))
	s, err = in.Sizes(ctx, "mail")
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{}, s)
}
