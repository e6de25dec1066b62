package jobtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/jobtest"
	"github.com/jobgen/jobgen/runtime"
)

// Jobs as generated code would write them.

type sendWelcome struct{ To string }

func (sendWelcome) JobName() string { return "test.SendWelcome" }
func (sendWelcome) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "emails"}
}
func (j sendWelcome) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type resize struct{ UserID int }

func (resize) JobName() string                { return "test.Resize" }
func (resize) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j resize) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type notify struct{ UserID int }

func (notify) JobName() string                { return "test.Notify" }
func (notify) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j notify) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// signUp is the code under test.
func signUp(ctx context.Context, email string, id int) error {
	if _, err := runtime.Dispatch(ctx, sendWelcome{To: email}); err != nil {
		return err
	}
	_, err := runtime.Chain(resize{UserID: id}, notify{UserID: id}).OnQueue("media").Dispatch(ctx)
	return err
}

// spy is a testing.TB that records failures instead of failing.
type spy struct {
	testing.TB
	errs []string
}

func (s *spy) Errorf(format string, args ...any) {
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}
func (s *spy) Helper() {}

func TestFakeAssertions(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	require.NoError(t, signUp(fake.Context(context.Background()), "ada@example.com", 1))

	jobtest.AssertDispatched[sendWelcome](t, fake)
	jobtest.AssertDispatched(t, fake, func(j sendWelcome) bool { return j.To == "ada@example.com" })
	jobtest.AssertDispatchedTimes[sendWelcome](t, fake, 1)
	jobtest.AssertDispatchedTimes[resize](t, fake, 1)
	jobtest.AssertNotDispatched[notify](t, fake) // chained, not dispatched itself
	jobtest.AssertChained(t, fake, resize{UserID: 1}, notify{UserID: 1})
	require.Equal(t, []sendWelcome{{To: "ada@example.com"}}, jobtest.Jobs[sendWelcome](fake))

	ds := fake.Dispatches()
	require.Len(t, ds, 2)
	require.Equal(t, "emails", ds[0].Queue)
	require.Equal(t, "media", ds[1].Queue)
	require.Len(t, ds[0].ID, 26)

	// Each assertion fails when it should, and says what it saw.
	s := &spy{TB: t}
	require.False(t, jobtest.AssertDispatched(s, fake, func(j sendWelcome) bool { return j.To == "bob@example.com" }))
	require.False(t, jobtest.AssertDispatchedTimes[sendWelcome](s, fake, 2))
	require.False(t, jobtest.AssertNotDispatched[resize](s, fake))
	require.False(t, jobtest.AssertNothingDispatched(s, fake))
	require.False(t, jobtest.AssertChained(s, fake, resize{UserID: 2}, notify{UserID: 2}))
	require.False(t, jobtest.AssertChained(s, fake, resize{UserID: 1}))
	require.Len(t, s.errs, 6)
	require.Contains(t, s.errs[0], "no jobtest_test.sendWelcome was dispatched matching the predicate")
	require.Contains(t, s.errs[0], "ada@example.com")
	require.Contains(t, s.errs[4], "[test.Resize -> test.Notify]")

	fake.Reset()
	jobtest.AssertNothingDispatched(t, fake)
}

func TestFakeRecordsOverrides(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	_, err := runtime.NewPendingDispatch(sendWelcome{To: "a"}).OnQueue("vip").OnConnection("eu").Delay(time.Minute).
		WithChain(runtime.NewPendingDispatch(notify{UserID: 3}).OnQueue("x")).Dispatch(ctx)
	require.NoError(t, err)
	d := fake.Dispatches()[0]
	require.Equal(t, sendWelcome{To: "a"}, d.Job)
	require.Equal(t, "vip", d.Queue)
	require.Equal(t, "eu", d.Connection)
	require.Equal(t, time.Minute, d.Delay)
	require.Equal(t, []runtime.Job{notify{UserID: 3}}, d.Chain, "chained jobs are unwrapped")
	jobtest.AssertChained(t, fake, sendWelcome{To: "a"}, notify{UserID: 3})
}

func TestFakeConcurrent(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = runtime.Dispatch(ctx, resize{UserID: i})
		}()
	}
	wg.Wait()
	jobtest.AssertDispatchedTimes[resize](t, fake, 50)
	jobtest.AssertDispatchedTimes(t, fake, 1, func(j resize) bool { return j.UserID == 7 })
}

func TestHarnessDrains(t *testing.T) {
	t.Parallel()
	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
	var mu sync.Mutex
	var ran []string
	note := func(s string) {
		mu.Lock()
		ran = append(ran, s)
		mu.Unlock()
	}
	runtime.Register(h.Router, "test.SendWelcome", func(ctx context.Context, j sendWelcome) error {
		note("welcome " + j.To)
		if strings.HasSuffix(j.To, ".invalid") {
			return errors.New("no such user")
		}
		return nil
	})
	runtime.Register(h.Router, "test.Resize", func(ctx context.Context, j resize) error {
		note(fmt.Sprint("resize ", j.UserID))
		return nil
	})
	runtime.Register(h.Router, "test.Notify", func(ctx context.Context, j notify) error {
		note(fmt.Sprint("notify ", j.UserID))
		// A job that dispatches another, on a queue not seen before.
		_, err := runtime.NewPendingDispatch(sendWelcome{To: "team@example.com"}).OnQueue("late").Dispatch(ctx)
		return err
	})
	ctx := h.Context(context.Background())
	require.NoError(t, signUp(ctx, "ada@example.com", 1))
	_, err := runtime.Dispatch(ctx, sendWelcome{To: "nobody@example.invalid"})
	require.NoError(t, err)

	require.NoError(t, h.Drain(ctx))
	require.ElementsMatch(t, []string{
		"welcome ada@example.com", "resize 1", "notify 1", "welcome team@example.com", "welcome nobody@example.invalid",
	}, ran)
	sizes, err := h.Sizes(ctx)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Failed: 1}, sizes)
	failed, err := runtime.NewInspector(h.Engine).Failed().List(ctx, "emails", 0, 10)
	require.NoError(t, err)
	require.Len(t, failed, 1)
	require.Contains(t, failed[0].Error, "no such user")

	// DispatchSync goes through the harness's router.
	require.NoError(t, runtime.DispatchSync(ctx, resize{UserID: 9}))
	require.Contains(t, ran, "resize 9")
}

func TestFakeBatches(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	done := runtime.NewCallback("test.done", func(ctx context.Context, arg string, o runtime.Outcome) error { return nil })
	id, err := runtime.NewBatch(resize{UserID: 1}, resize{UserID: 2}, runtime.Chain(resize{UserID: 3}, notify{UserID: 3})).
		Name("avatars").AllowFailures().Then(done.With("x")).Dispatch(ctx)
	require.NoError(t, err)
	require.Len(t, id, 26)

	jobtest.AssertBatched(t, fake)
	jobtest.AssertBatched(t, fake, func(b jobtest.Batch) bool {
		return b.Options.Name == "avatars" && b.Options.AllowFailures && len(b.Jobs) == 3
	})
	jobtest.AssertBatchCount(t, fake, 1)
	jobtest.AssertNotDispatched[resize](t, fake) // batched, not dispatched
	b := fake.Batches()[0]
	require.Equal(t, []resize{{1}, {2}, {3}}, jobtest.BatchJobs[resize](b))
	require.Equal(t, []notify{{3}}, jobtest.BatchJobs[notify](b))
	require.Equal(t, "test.done", b.Options.Then[0].Name)
	require.Equal(t, []string{"default", "default", "default"}, b.Queues)

	s := &spy{TB: t}
	require.False(t, jobtest.AssertBatched(s, fake, func(b jobtest.Batch) bool { return b.Options.Name == "other" }))
	require.False(t, jobtest.AssertBatchCount(s, fake, 2))
	require.False(t, jobtest.AssertNothingDispatched(s, fake))
	require.Len(t, s.errs, 3)
	require.Contains(t, s.errs[0], `"avatars" (3 jobs)`)

	// Each job's queue is the one the engine pushes it to.
	_, err = runtime.NewBatch(resize{UserID: 4}, runtime.NewPendingDispatch(resize{UserID: 5}).OnQueue("db"), sendWelcome{To: "ada"}).Dispatch(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"default", "db", "emails"}, fake.Batches()[1].Queues)
}

// later is a job whose annotation delays it.
type later struct{ N int }

func (later) JobName() string                { return "test.Later" }
func (later) JobOptions() runtime.JobOptions { return runtime.JobOptions{Delay: time.Hour} }
func (j later) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func TestFakeRefusesWhatTheEngineRefuses(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	for name, dispatch := range map[string]func() (string, error){
		"a chain as a link": func() (string, error) {
			return runtime.Chain(resize{UserID: 1}, runtime.Chain(notify{UserID: 1}, notify{UserID: 2})).Dispatch(ctx)
		},
		"a chain wrapped in a dispatch": func() (string, error) {
			return runtime.NewPendingDispatch(runtime.Chain(resize{UserID: 1}, notify{UserID: 1})).Dispatch(ctx)
		},
		"a bad queue name": func() (string, error) {
			return runtime.NewPendingDispatch(resize{UserID: 1}).OnQueue("a#b").Dispatch(ctx)
		},
	} {
		_, err := dispatch()
		require.ErrorIs(t, err, runtime.ErrInvalid, name)
	}
	require.Empty(t, fake.Dispatches(), "nothing refused is recorded")

	for name, batch := range map[string]*runtime.PendingBatch{
		"a bad queue name":             runtime.NewBatch(resize{UserID: 1}, runtime.NewPendingDispatch(resize{UserID: 2}).OnQueue("a#b")),
		"a job on another connection":  runtime.NewBatch(runtime.NewPendingDispatch(resize{UserID: 1}).OnConnection("elsewhere")),
		"a callback not made as one":   runtime.NewBatch(resize{UserID: 1}).Then(runtime.CallbackRef{}),
		"a chain that carries a chain": runtime.NewBatch(runtime.Chain(runtime.NewPendingDispatch(resize{UserID: 1}).WithChain(notify{UserID: 1}), notify{UserID: 2})),
	} {
		_, err := batch.Dispatch(ctx)
		require.ErrorIs(t, err, runtime.ErrInvalid, name)
	}
	require.Empty(t, fake.Batches(), "no refused batch is recorded")

	// runtime.Dispatch of a chain dispatches the chain, as the engine does.
	_, err := runtime.Dispatch(ctx, runtime.Chain(resize{UserID: 1}, notify{UserID: 1}))
	require.NoError(t, err)
	jobtest.AssertChained(t, fake, resize{UserID: 1}, notify{UserID: 1})
}

func TestFakeRecordsChainDelays(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	_, err := runtime.Chain(
		resize{UserID: 1},
		runtime.NewPendingDispatch(notify{UserID: 1}).Delay(time.Minute),
		notify{UserID: 2},
		later{N: 1},
		runtime.NewPendingDispatch(later{N: 2}).Delay(0),
		runtime.NewPendingDispatch(later{N: 3}).OnQueue("x"),
	).Dispatch(ctx)
	require.NoError(t, err)
	d := fake.Dispatches()[0]
	require.Equal(t, []runtime.Job{notify{UserID: 1}, notify{UserID: 2}, later{N: 1}, later{N: 2}, later{N: 3}}, d.Chain)
	require.Equal(t, []time.Duration{time.Minute, 0, time.Hour, 0, time.Hour}, d.ChainDelays,
		"each link's own delay, else its annotation's")
}

// elsewhere is a job whose annotation names a queue and a connection.
type elsewhere struct{ N int }

func (elsewhere) JobName() string { return "test.Elsewhere" }
func (elsewhere) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "reports", Connection: "archive"}
}
func (j elsewhere) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

func TestFakeRecordsChainQueues(t *testing.T) {
	t.Parallel()
	links := func() []runtime.Job {
		return []runtime.Job{
			resize{UserID: 1},
			notify{UserID: 1},
			sendWelcome{To: "ada"},
			runtime.NewPendingDispatch(notify{UserID: 2}).OnQueue("db").OnConnection("primary"),
			elsewhere{N: 1},
		}
	}
	for _, tc := range []struct {
		name        string
		chain       *runtime.PendingChain
		queues      []string // the first job's, then the links'
		connections []string
	}{{
		name:        "links' own",
		chain:       runtime.Chain(links()...),
		queues:      []string{"default", "default", "emails", "db", "reports"},
		connections: []string{"", "", "", "primary", "archive"},
	}, {
		name:        "chain's in place of annotations",
		chain:       runtime.Chain(links()...).OnQueue("imports").OnConnection("bulk"),
		queues:      []string{"imports", "imports", "imports", "db", "imports"},
		connections: []string{"bulk", "bulk", "bulk", "primary", "bulk"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := jobtest.NewFake()
			_, err := tc.chain.Dispatch(fake.Context(context.Background()))
			require.NoError(t, err)
			d := fake.Dispatches()[0]
			require.Len(t, d.Chain, 4)
			require.Equal(t, tc.queues, append([]string{d.Queue}, d.ChainQueues...))
			require.Equal(t, tc.connections, append([]string{d.Connection}, d.ChainConnections...))
		})
	}
}

// flaky fails its first Fails attempts, then succeeds; it retries after
// 200ms.
type flaky struct{ Fails int }

func (flaky) JobName() string { return "test.Flaky" }
func (flaky) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Tries: 3, Backoff: []time.Duration{200 * time.Millisecond}}
}
func (j flaky) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// registerFlaky registers flaky's handler and returns its attempt count.
func registerFlaky(h *jobtest.Harness) *atomic.Int32 {
	var attempts atomic.Int32
	runtime.Register(h.Router, "test.Flaky", func(ctx context.Context, j flaky) error {
		info, _ := runtime.JobInfoFrom(ctx)
		attempts.Add(1)
		if info.Attempt <= j.Fails {
			return fmt.Errorf("attempt %d fails", info.Attempt)
		}
		return nil
	})
	return &attempts
}

// A retry that has fallen due by the next Drain runs in it.
func TestHarnessDrainRunsDueRetries(t *testing.T) {
	t.Parallel()
	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
	attempts := registerFlaky(h)
	ctx := h.Context(context.Background())
	_, err := runtime.Dispatch(ctx, flaky{Fails: 1})
	require.NoError(t, err)

	require.NoError(t, h.Drain(ctx))
	require.Equal(t, int32(1), attempts.Load())
	sizes, err := h.Sizes(ctx)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{Delayed: 1}, sizes, "the retry waits out its backoff")

	time.Sleep(400 * time.Millisecond) // past the 200ms backoff
	require.NoError(t, h.Drain(ctx))
	require.Equal(t, int32(2), attempts.Load(), "the retry, now due, ran")
	sizes, err = h.Sizes(ctx)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{}, sizes)
}

// DrainAll waits for delayed jobs and retries, and runs them and what
// they dispatch, until nothing is left.
func TestHarnessDrainAll(t *testing.T) {
	t.Parallel()
	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
	attempts := registerFlaky(h)
	var mu sync.Mutex
	var ran []string
	runtime.Register(h.Router, "test.Resize", func(ctx context.Context, j resize) error {
		mu.Lock()
		ran = append(ran, fmt.Sprint("resize ", j.UserID))
		mu.Unlock()
		if j.UserID == 1 {
			// A delayed job dispatching another delayed job.
			_, err := runtime.NewPendingDispatch(resize{UserID: 2}).Delay(150 * time.Millisecond).Dispatch(ctx)
			return err
		}
		return nil
	})
	ctx := h.Context(context.Background())
	_, err := runtime.Dispatch(ctx, flaky{Fails: 2}) // runs three times, 200ms apart
	require.NoError(t, err)
	_, err = runtime.NewPendingDispatch(resize{UserID: 1}).Delay(300 * time.Millisecond).Dispatch(ctx)
	require.NoError(t, err)

	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, h.DrainAll(dctx))
	require.Equal(t, int32(3), attempts.Load())
	require.Equal(t, []string{"resize 1", "resize 2"}, ran)
	sizes, err := h.Sizes(ctx)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{}, sizes)

	// A job due after ctx's deadline: DrainAll says what it left.
	_, err = runtime.NewPendingDispatch(resize{UserID: 3}).Delay(time.Hour).Dispatch(ctx)
	require.NoError(t, err)
	dctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = h.DrainAll(dctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "0 ready, 1 delayed and 0 reserved jobs left")
}

// A paused queue's jobs wait for its resume: Drain and DrainAll return
// without them rather than wait for jobs no worker takes.
func TestHarnessDrainLeavesPausedQueues(t *testing.T) {
	t.Parallel()
	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
	var runs atomic.Int32
	runtime.Register(h.Router, "test.Resize", func(context.Context, resize) error { runs.Add(1); return nil })
	ctx := h.Context(context.Background())
	require.NoError(t, runtime.NewInspector(h.Engine).PauseQueue(ctx, "media"))
	_, err := runtime.NewPendingDispatch(resize{UserID: 1}).OnQueue("media").Dispatch(ctx)
	require.NoError(t, err)
	_, err = runtime.Dispatch(ctx, resize{UserID: 2})
	require.NoError(t, err)

	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, h.Drain(dctx))
	require.NoError(t, h.DrainAll(dctx))
	require.Equal(t, int32(1), runs.Load())

	require.NoError(t, runtime.NewInspector(h.Engine).ResumeQueue(ctx, "media"))
	require.NoError(t, h.Drain(dctx))
	require.Equal(t, int32(2), runs.Load())
}

// Dispatches in a transaction reach the fake as dispatches marked InTx;
// the transaction is never touched.
func TestFakeRecordsDispatchTx(t *testing.T) {
	t.Parallel()
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())
	var tx runtime.Tx // a fake writes nothing into it
	_, err := runtime.DispatchTx(ctx, tx, sendWelcome{To: "a"})
	require.NoError(t, err)
	_, err = runtime.DispatchManyTx(ctx, tx, []resize{{UserID: 1}, {UserID: 2}})
	require.NoError(t, err)
	_, err = runtime.NewBatch(notify{UserID: 3}).DispatchTx(ctx, tx)
	require.NoError(t, err)
	_, err = runtime.NewPendingDispatch(sendWelcome{To: "b"}).OnQueue("bad{q}").DispatchTx(ctx, tx)
	require.ErrorIs(t, err, runtime.ErrInvalid)

	ds := fake.Dispatches()
	require.Len(t, ds, 3)
	for _, d := range ds {
		require.True(t, d.InTx)
	}
	require.Equal(t, resize{UserID: 2}, ds[2].Job)
	require.Len(t, fake.Batches(), 1)
	require.True(t, fake.Batches()[0].InTx)
	jobtest.AssertDispatched(t, fake, func(j sendWelcome) bool { return j.To == "a" })
}
