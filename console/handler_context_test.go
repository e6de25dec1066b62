package console_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/jobtest"
	"github.com/jobgen/jobgen/runtime"
)

// signup is a job whose handler fires signedUp, whose audit listener is
// synchronous: Fire runs it through the router on the job's context.
type signup struct{ User string }

func (signup) JobName() string                { return "test.Signup" }
func (signup) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j signup) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type signedUp struct{ User string }

type audit struct{}

func (audit) ListenerName() string                { return "test.Audit" }
func (audit) ListenerOptions() runtime.JobOptions { return runtime.JobOptions{} }

// audited records the users the synchronous listener saw.
type audited struct {
	mu    sync.Mutex
	users []string
}

// register routes signup and its listener on r.
func (a *audited) register(r *runtime.Router) {
	runtime.Register(r, "test.Signup", func(ctx context.Context, j signup) error {
		e := signedUp(j)
		return runtime.Fire(ctx, e, runtime.SyncListener[audit](e))
	})
	runtime.RegisterListener[audit](r, func(_ context.Context, e signedUp) error {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.users = append(a.users, e.User)
		return nil
	})
}

// The same handler, firing an event with a synchronous listener, runs
// under jobtest's harness and under queue:work alike: both give it the
// context runtime.HandlerContext makes. queue:work used to fail it with
// "DispatchSync: no router" where the harness passed.
func TestHandlerContextSameUnderHarnessAndWorker(t *testing.T) {
	t.Parallel()
	t.Run("jobtest.Harness", func(t *testing.T) {
		t.Parallel()
		h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
		var a audited
		a.register(h.Router)
		ctx := h.Context(context.Background())
		_, err := runtime.Dispatch(ctx, signup{User: "ada"})
		require.NoError(t, err)
		require.NoError(t, h.Drain(ctx))
		require.Equal(t, []string{"ada"}, a.users)
		failed, err := runtime.NewInspector(h.Engine).Failed().List(ctx, "default", 0, 10)
		require.NoError(t, err)
		require.Empty(t, failed)
	})
	t.Run("queue:work", func(t *testing.T) {
		t.Parallel()
		b := setup(t, redistest.Backends(t)[0])
		var a audited
		a.register(b.router)
		b.push(t, "default", signup{User: "ada"})
		code, stdout, stderr := b.run(t, "queue:work", "--stop-when-empty")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, "1 done, 0 released for retry, 0 failed.", stdout)
		require.Equal(t, []string{"ada"}, a.users)
	})
}
