package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
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

type lostJob struct{ N int }

// A worker whose reserve loses its reply for good runs the jobs it took
// once each, as attempt 1 of 1, once Redis answers again: none waits out
// its lease to fail unrun as "attempt 2 of 1".
func TestWorkerRunsOnceTheJobsOfALostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxy := newReplyDropper(t, redistest.Addr(t), runtime.ScriptSHA("reserve"))
	e, err := runtime.Open(ctx, "redis://"+proxy.addr(), runtime.EngineConfig{Prefix: redistest.Prefix(t), FailedMaxCount: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	in := runtime.NewInspector(e)
	for i := range 3 {
		body, err := runtime.Encode(lostJob{N: i})
		require.NoError(t, err)
		require.NoError(t, e.Push(ctx, &runtime.Envelope{Name: "test.Lost", Queue: "mail", Body: body}))
	}
	var mu sync.Mutex
	runs := map[int][]int{}
	r := runtime.NewRouter()
	runtime.Register(r, "test.Lost", func(ctx context.Context, j lostJob) error {
		mu.Lock()
		defer mu.Unlock()
		info, _ := runtime.JobInfoFrom(ctx)
		runs[j.N] = append(runs[j.N], info.Attempt)
		return nil
	})
	proxy.armed.Store(true)
	errs := &errorCount{}
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"mail"}, Concurrency: 8, Tries: 1,
		RetryAfter: 30 * time.Second, Timeout: time.Second, Sleep: 20 * time.Millisecond, Logger: slog.New(errs)})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { cancel(); <-done }()

	// The worker's reserve took all three; its reply, and its retries'
	// replies, were dropped, and the worker logged the call's error.
	require.Eventually(t, func() bool {
		s, err := in.Sizes(ctx, "mail")
		return err == nil && s.Reserved == 3 && proxy.dropped.Load() > 0 && errs.n.Load() > 0
	}, 20*time.Second, 10*time.Millisecond)
	proxy.armed.Store(false)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs) == 3
	}, 30*time.Second, 10*time.Millisecond, "the jobs ran")
	cancel()
	require.NoError(t, <-done)
	done <- nil
	require.Equal(t, map[int][]int{0: {1}, 1: {1}, 2: {1}}, runs, "each ran once, as attempt 1")
	failed, err := in.Failed().List(ctx, "mail", 0, 10)
	require.NoError(t, err)
	require.Empty(t, failed)
}

// errorCount is a slog handler that counts the records at ERROR.
type errorCount struct{ n atomic.Int64 }

func (h *errorCount) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *errorCount) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h *errorCount) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorCount) WithGroup(string) slog.Handler      { return h }
