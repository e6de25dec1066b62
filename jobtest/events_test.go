package jobtest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/jobtest"
	"github.com/jobgen/jobgen/runtime"
)

// An event and its listeners as generated code would write them.

type userSignedUp struct{ Email string }

type welcomeMail struct{}

func (welcomeMail) ListenerName() string                { return "test.WelcomeMail" }
func (welcomeMail) ListenerOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "emails"} }

type analytics struct{}

func (analytics) ListenerName() string                { return "test.Analytics" }
func (analytics) ListenerOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "emails"} }

type auditTrail struct{}

func (auditTrail) ListenerName() string                { return "test.AuditTrail" }
func (auditTrail) ListenerOptions() runtime.JobOptions { return runtime.JobOptions{} }

func (e userSignedUp) fire(ctx context.Context) error {
	return runtime.Fire(ctx, e,
		runtime.SyncListener[auditTrail](e),
		runtime.QueuedListener[welcomeMail](e),
		runtime.QueuedListener[analytics](e))
}

func TestFakeEvents(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	require.NoError(t, userSignedUp{Email: "ada@example.com"}.fire(ctx))

	jobtest.AssertFired[userSignedUp](t, fake)
	jobtest.AssertFired(t, fake, func(e userSignedUp) bool { return e.Email == "ada@example.com" })
	jobtest.AssertNotFired(t, fake, func(e userSignedUp) bool { return e.Email == "bob@example.com" })
	jobtest.AssertDispatched(t, fake, func(j runtime.ListenerJob[welcomeMail, userSignedUp]) bool {
		return j.Event.Email == "ada@example.com"
	})
	jobtest.AssertDispatchedTimes[runtime.ListenerJob[analytics, userSignedUp]](t, fake, 1)
	jobtest.AssertNotDispatched[runtime.ListenerJob[auditTrail, userSignedUp]](t, fake) // synchronous
	evs := fake.Events()
	require.Len(t, evs, 1)
	require.Len(t, evs[0].Listeners, 2)
	require.Len(t, evs[0].Sync, 1)
	require.Equal(t, "emails", fake.Dispatches()[0].Queue)

	s := &spy{TB: t}
	jobtest.AssertFired(s, fake, func(e userSignedUp) bool { return false })
	require.Len(t, s.errs, 1)
	require.Contains(t, s.errs[0], "no jobtest_test.userSignedUp was fired matching the predicate")
}

// TestHarnessEvents fires an event on the in-process harness: each
// queued listener runs as its own job.
func TestHarnessEvents(t *testing.T) {
	t.Parallel()
	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
	var (
		mu  sync.Mutex
		got []string
	)
	add := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	runtime.RegisterListener[auditTrail](h.Router, func(ctx context.Context, e userSignedUp) error {
		add("audit " + e.Email)
		return nil
	})
	runtime.RegisterListener[welcomeMail](h.Router, func(ctx context.Context, e userSignedUp) error {
		add("mail " + e.Email)
		return nil
	})
	runtime.RegisterListener[analytics](h.Router, func(ctx context.Context, e userSignedUp) error {
		add("analytics " + e.Email)
		return nil
	})
	ctx := runtime.WithRouter(h.Context(context.Background()), h.Router)
	require.NoError(t, userSignedUp{Email: "ada@example.com"}.fire(ctx))
	require.Equal(t, []string{"audit ada@example.com"}, got)
	require.NoError(t, h.Drain(ctx))
	require.ElementsMatch(t, []string{"audit ada@example.com", "mail ada@example.com", "analytics ada@example.com"}, got)
}

func TestFakeDispatchMany(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	ids, err := runtime.NewPendingMany([]resize{{UserID: 1}, {UserID: 2}}).OnQueue("media").Dispatch(ctx)
	require.NoError(t, err)
	require.Len(t, ids, 2)
	jobtest.AssertDispatchedTimes[resize](t, fake, 2)
	require.Equal(t, "media", fake.Dispatches()[1].Queue)
}
