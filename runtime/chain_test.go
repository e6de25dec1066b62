package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// stepJob is a link of a test chain.
type stepJob struct {
	Step string
	Fail bool
	Q    string `msgpack:"-"`
	C    string `msgpack:"-"`
}

func (stepJob) JobName() string { return "test.Step" }
func (j stepJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: j.Q, Connection: j.C}
}
func (j stepJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// steps records the steps handlers ran, with their queue and attempt.
type steps struct {
	mu  sync.Mutex
	ran []string
}

func (s *steps) register(r *runtime.Router) {
	runtime.Register(r, "test.Step", func(ctx context.Context, j stepJob) error {
		info, _ := runtime.JobInfoFrom(ctx)
		s.mu.Lock()
		s.ran = append(s.ran, fmt.Sprintf("%s@%s#%d", j.Step, info.Queue, info.Attempt))
		s.mu.Unlock()
		if j.Fail {
			return errors.New("step " + j.Step + " failed")
		}
		return nil
	})
}

func (s *steps) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ran)
}

// caught records the calls of a catch callback.
type caught struct {
	mu    sync.Mutex
	calls []string
}

func (c *caught) callback(name string) *runtime.Callback[string] {
	return runtime.NewCallback(name, func(ctx context.Context, arg string, o runtime.Outcome) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.calls = append(c.calls, fmt.Sprintf("%s: %s %v", arg, o.JobName, o.Err))
		return nil
	})
}

func (c *caught) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

func TestChainQueuesAndOverrides(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var s steps
		s.register(b.router)
		_, err := runtime.Chain(
			stepJob{Step: "a"},
			runtime.NewPendingDispatch(stepJob{Step: "b"}).OnQueue("special"),
			stepJob{Step: "c", Q: "annotated"},
		).OnQueue("chained").Dispatch(b.ctx)
		require.NoError(t, err)
		// Without a chain-wide queue, each link keeps its annotation.
		_, err = stepJob{Step: "x", Q: "annotated"}.withChain(stepJob{Step: "y"}, stepJob{Step: "z", Q: "annotated"}).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"chained", "special", "annotated", "default"}, StopWhenEmpty: true, Concurrency: 1})
		require.ElementsMatch(t, []string{
			"a@chained#1", "b@special#1", "c@chained#1",
			"x@annotated#1", "y@default#1", "z@annotated#1",
		}, s.list())
	})
}

// runtime.Dispatch of a chain dispatches the chain; a chain anywhere a
// single job goes is refused, where it was sent as its first job alone.
func TestChainsDoNotNest(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var s steps
		s.register(b.router)
		_, err := runtime.Dispatch(b.ctx, runtime.Chain(stepJob{Step: "a"}, stepJob{Step: "b"}))
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Concurrency: 1})
		require.Equal(t, []string{"a@default#1", "b@default#1"}, s.list(), "every link of the chain ran")

		for name, dispatch := range map[string]func() (string, error){
			"a chain as a link": func() (string, error) {
				return runtime.Chain(stepJob{Step: "x"}, runtime.Chain(stepJob{Step: "y"}, stepJob{Step: "z"})).Dispatch(b.ctx)
			},
			"a chain as the first job": func() (string, error) {
				return runtime.Chain(runtime.Chain(stepJob{Step: "x"}, stepJob{Step: "y"}), stepJob{Step: "z"}).Dispatch(b.ctx)
			},
			"a chain wrapped in a dispatch": func() (string, error) {
				return runtime.NewPendingDispatch(runtime.Chain(stepJob{Step: "x"}, stepJob{Step: "y"})).OnQueue("q").Dispatch(b.ctx)
			},
			"a chain as a link of WithChain": func() (string, error) {
				return stepJob{Step: "x"}.withChain(runtime.Chain(stepJob{Step: "y"}, stepJob{Step: "z"})).Dispatch(b.ctx)
			},
		} {
			_, err := dispatch()
			require.ErrorIs(t, err, runtime.ErrInvalid, name)
			require.ErrorContains(t, err, "is a chain of 2 jobs", name)
		}
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"), "nothing was pushed")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "q"))
	})
}

// A link with a delay of its own, set on the link or by its annotation,
// is pushed delayed by it when the link before it completes, as Laravel
// does; a link without one is pushed ready.
func TestChainLinkDelay(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		const delay = 400 * time.Millisecond
		var rec recorder
		runtime.Register(b.router, "test.Step", func(ctx context.Context, j stepJob) error {
			rec.add(ctx, j.Step)
			return nil
		})
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			rec.add(ctx, j.Tag)
			return nil
		})
		b.start(t, runtime.WorkerConfig{Sleep: 20 * time.Millisecond})
		_, err := stepJob{Step: "a"}.withChain(
			runtime.NewPendingDispatch(stepJob{Step: "b"}).Delay(delay),
			stepJob{Step: "c"},
			tagged(1, "d", runtime.JobOptions{Delay: delay}), // the annotation's delay
		).Dispatch(b.ctx)
		require.NoError(t, err)

		eventually(t, func() bool { return len(rec.list()) >= 1 }, "a runs")
		eventually(t, func() bool { return sizes(t, b.bundle, "default").Delayed == 1 }, "b is pushed delayed")
		require.Equal(t, []string{"a"}, rec.list(), "b is not ready before its delay")
		eventually(t, func() bool { return len(rec.list()) == 4 }, "the chain runs to its end")
		require.Equal(t, []string{"a", "b", "c", "d"}, rec.list())
		require.GreaterOrEqual(t, rec.at[1].Sub(rec.at[0]), delay, "b waited for its delay after a")
		require.GreaterOrEqual(t, rec.at[3].Sub(rec.at[2]), delay, "d waited for its annotated delay after c")

		// Each link's JobQueued is emitted by the job before it, once its
		// push returned: the link may run first, and emit its own, so the
		// events are matched to the jobs by ID, not by order.
		queued := map[string]time.Duration{}
		for _, ev := range b.log.of(runtime.JobQueued) {
			queued[ev.ID] = ev.Delay
		}
		var delays []time.Duration
		for _, info := range rec.infos() {
			d, ok := queued[info.ID]
			require.True(t, ok, "no JobQueued for %s", info.ID)
			delays = append(delays, d)
		}
		require.Equal(t, []time.Duration{0, delay, 0, delay}, delays, "JobQueued carries each link's delay")

		// A link's delay already past makes it ready at once (delay_test.go).
		_, err = stepJob{Step: "x"}.withChain(runtime.NewPendingDispatch(stepJob{Step: "y"}).Delay(-time.Second)).Dispatch(b.ctx)
		require.NoError(t, err)
	})
}

func (j stepJob) withChain(jobs ...runtime.Job) *runtime.PendingDispatch {
	return runtime.NewPendingDispatch(j).WithChain(jobs...)
}

// recordingDispatcher keeps what it is asked to dispatch.
type recordingDispatcher struct{ got []*runtime.PendingDispatch }

func (d *recordingDispatcher) Dispatch(ctx context.Context, p *runtime.PendingDispatch) (string, error) {
	d.got = append(d.got, p)
	return "id", nil
}

func TestChainConnections(t *testing.T) {
	t.Parallel()
	var d recordingDispatcher
	ctx := runtime.WithDispatcher(context.Background(), &d)
	_, err := runtime.Chain(
		stepJob{Step: "a"},
		runtime.NewPendingDispatch(stepJob{Step: "b"}).OnConnection("own"),
		stepJob{Step: "c"},
	).OnConnection("chain").OnQueue("q").Dispatch(ctx)
	require.NoError(t, err)
	require.Len(t, d.got, 1)
	env, err := d.got[0].Envelope()
	require.NoError(t, err)
	require.Equal(t, "chain", env.Connection)
	require.Len(t, env.Chain, 2)
	var conns, queues []string
	for _, b := range env.Chain {
		link, err := runtime.DecodeEnvelope("", idOf(t, b), b)
		require.NoError(t, err)
		conns, queues = append(conns, link.Connection), append(queues, link.Queue)
	}
	require.Equal(t, []string{"own", "chain"}, conns)
	require.Equal(t, []string{"q", "q"}, queues)

	_, err = runtime.Chain().Dispatch(ctx)
	require.ErrorIs(t, err, runtime.ErrInvalid)
	_, err = runtime.Chain(stepJob{}.withChain(stepJob{}), stepJob{}).Dispatch(ctx)
	require.ErrorIs(t, err, runtime.ErrInvalid)
	// Links are checked when the chain is encoded, as an *Engine does.
	for _, c := range []*runtime.PendingChain{
		runtime.Chain(stepJob{}, stepJob{}.withChain(stepJob{})),
		runtime.Chain(stepJob{}, runtime.NewPendingDispatch(stepJob{}).OnQueue("bad{")),
	} {
		_, err = c.Dispatch(ctx)
		require.NoError(t, err)
		_, err = d.got[len(d.got)-1].Envelope()
		require.ErrorIs(t, err, runtime.ErrInvalid)
	}
}

// idOf reads the ID out of an encoded envelope.
func idOf(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		ID string `msgpack:"id"`
	}
	require.NoError(t, msgpack.Unmarshal(b, &e))
	return e.ID
}

// LinkQueue names the queue and connection each link is pushed to, so
// that a fake can record them: each link here runs on the queue, and on
// the engine of the connection, that LinkQueue names.
func TestChainLinkQueue(t *testing.T) {
	forEachBusBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, be redistest.Backend) {
		// Connections are set for the whole process, so these are named
		// for this test alone. The other engine has keys of its own.
		connA, connB := b.prefix+"-a", b.prefix+"-b"
		other, err := runtime.Open(b.ctx, be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = other.Close() })
		runtime.SetConnection(connA, b.engine)
		runtime.SetConnection(connB, other)

		// Every job names a connection, its own or the chain's, so that
		// no push falls to the process's default dispatcher.
		chains := []*runtime.PendingChain{
			runtime.Chain(
				stepJob{Step: "a"},
				stepJob{Step: "b"},
				runtime.NewPendingDispatch(stepJob{Step: "c"}).OnQueue("special").OnConnection(connB),
				stepJob{Step: "d", Q: "annotated", C: connB},
			).OnQueue("chained").OnConnection(connA),
			runtime.Chain(
				stepJob{Step: "w", C: connA},
				stepJob{Step: "x", C: connA},
				runtime.NewPendingDispatch(stepJob{Step: "y", Q: "annotated", C: connA}).OnConnection(connB),
				stepJob{Step: "z", Q: "annotated", C: connB},
			),
		}
		want := map[string][]string{
			connA: {"a@chained", "b@chained", "d@chained", "w@default", "x@default"},
			connB: {"c@special", "y@annotated", "z@annotated"},
		}

		// What LinkQueue says, for the first job as Queue and Connection
		// say.
		var rec recordingDispatcher
		fakeCtx := runtime.WithDispatcher(context.Background(), &rec)
		said := map[string][]string{}
		for _, c := range chains {
			_, err := c.Dispatch(fakeCtx)
			require.NoError(t, err)
			p := rec.got[len(rec.got)-1]
			said[p.Connection()] = append(said[p.Connection()], stepOf(p)+"@"+p.Queue())
			for i, j := range p.Chain() {
				q, conn := p.LinkQueue(i)
				said[conn] = append(said[conn], stepOf(j)+"@"+q)
			}
		}
		require.Equal(t, want, said)

		// What the engines do. Without a dispatcher on the context, each
		// push goes to the engine of its connection.
		ctx := context.Background()
		queues := []string{"chained", "special", "annotated", "default"}
		var sa, sb steps
		wa := wbundle{bundle: b.bundle, router: runtime.NewRouter(), log: &eventLog{}}
		wa.ctx = ctx
		sa.register(wa.router)
		wb := wbundle{bundle: bundle{ctx: ctx, backend: b.backend, engine: other, rdb: other.Client()}, router: runtime.NewRouter(), log: &eventLog{}}
		sb.register(wb.router)
		wa.start(t, runtime.WorkerConfig{Queues: queues, Sleep: 20 * time.Millisecond})
		wb.start(t, runtime.WorkerConfig{Queues: queues, Sleep: 20 * time.Millisecond})
		for _, c := range chains {
			_, err := c.Dispatch(ctx)
			require.NoError(t, err)
		}
		eventually(t, func() bool { return len(sa.list())+len(sb.list()) == 8 }, "both chains run to their ends")
		ran := map[string][]string{}
		for conn, s := range map[string]*steps{connA: &sa, connB: &sb} {
			for _, r := range s.list() {
				r, _, _ = cut(r, "#")
				ran[conn] = append(ran[conn], r)
			}
			slices.Sort(ran[conn])
		}
		require.Equal(t, want, ran)
	})
}

// stepOf returns the step of j, a stepJob or a dispatch of one.
func stepOf(j runtime.Job) string {
	if p, ok := j.(*runtime.PendingDispatch); ok {
		return stepOf(p.Job())
	}
	return j.(stepJob).Step
}

func TestChainCatch(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var s steps
		var c caught
		s.register(b.router)
		cb := c.callback("test.catch")
		runtime.RegisterCallback(b.router, cb)
		_, err := runtime.Chain(stepJob{Step: "a"}, stepJob{Step: "b", Fail: true}, stepJob{Step: "c"}).
			Catch(cb.With("import 7")).Dispatch(b.ctx)
		require.NoError(t, err)
		// The generated WithChain takes a catch too.
		_, err = stepJob{Step: "x", Fail: true}.withChain(stepJob{Step: "y"}).Catch(cb.With("x")).Dispatch(b.ctx)
		require.NoError(t, err)
		// A chain that succeeds does not call it.
		_, err = runtime.Chain(stepJob{Step: "p"}, stepJob{Step: "q"}).Catch(cb.With("never")).Dispatch(b.ctx)
		require.NoError(t, err)

		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, Tries: 2})
		require.ElementsMatch(t, []string{
			"a@default#1", "b@default#1", "b@default#2", "x@default#1", "x@default#2", "p@default#1", "q@default#1",
		}, s.list(), "the catch runs once, after the last try; the links after the failure are dropped")
		require.ElementsMatch(t, []string{
			"import 7: test.Step step b failed", "x: test.Step step x failed",
		}, trimErrs(c.list()))
		require.Len(t, b.failed(t, "default"), 2)
		require.Equal(t, runtime.Sizes{Failed: 2}, sizes(t, b.bundle, "default"))
	})
}

// trimErrs cuts the wrapping the worker adds around a handler's error
// ("...failed after 2 of 2 tries: step b failed").
func trimErrs(calls []string) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		head, _, _ := cut(c, " jobgen:")
		_, tail, _ := cut(c, " tries: ")
		out[i] = head + " " + tail
	}
	return out
}

func cut(s, sep string) (string, string, bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

func TestChainUnknownCallback(t *testing.T) {
	t.Parallel()
	r := runtime.NewRouter()
	err := r.RunCallback(context.Background(), runtime.CallbackRef{Name: "nope"}, runtime.Outcome{})
	require.ErrorIs(t, err, runtime.ErrUnknownCallback)
	var c caught
	runtime.RegisterCallback(r, c.callback("dup"))
	runtime.RegisterCallback(r, c.callback("dup"))
	runtime.RegisterCallback(r, c.callback(""))
	require.ErrorIs(t, r.Err(), runtime.ErrInvalid)
	require.ErrorContains(t, r.Err(), `callback "dup" registered twice`)
	require.ErrorContains(t, r.Err(), "empty name")
}

// TestChainCrashBeforeAck: a worker finishes link a, pushes link b, and
// dies before its ack of a reaches Redis. b runs and is acked; then a's
// lease runs out and another worker reserves a again. Link b must not run
// a second time, and a, whose successor was pushed, is acked without
// running again.
func TestChainCrashBeforeAck(t *testing.T) {
	for _, crossQueue := range []bool{false, true} {
		t.Run(fmt.Sprintf("next link on another queue %v", crossQueue), func(t *testing.T) {
			forEachBusBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, be redistest.Backend) {
				var s steps
				s.register(b.router)
				qb := ""
				if crossQueue {
					qb = "second"
				}
				idA, err := runtime.Chain(stepJob{Step: "a"}, stepJob{Step: "b", Q: qb}, stepJob{Step: "c"}).Dispatch(b.ctx)
				require.NoError(t, err)

				// The first worker's engine loses every ack of a, and only
				// those: the acks of b and c may go in one call with a's.
				crashing := b.open(t, be, runtime.EngineConfig{})
				hook := &loseAck{id: idA}
				crashing.Client().AddHook(beforeCalls(hook.spoil))
				crashing.Subscribe(b.log.add)
				cfg := runtime.WorkerConfig{
					Queues: []string{"default", "second"}, RetryAfter: 600 * time.Millisecond, Timeout: 500 * time.Millisecond,
					Sleep: 20 * time.Millisecond, Logger: quiet,
				}
				w1, err := runtime.NewWorker(crashing, b.router, cfg)
				require.NoError(t, err)
				ctx1, stop1 := context.WithCancel(b.ctx)
				done := make(chan error, 1)
				go func() { done <- w1.Run(ctx1) }()
				eventually(t, func() bool { return len(s.list()) == 3 && hook.lost() > 0 }, "a, b and c run; a's ack is lost")
				stop1()
				require.NoError(t, <-done)
				require.Equal(t, int64(1), sizes(t, b.bundle, "default").Reserved, "a is still reserved, as after a crash")

				// Another worker takes a again once its lease runs out.
				_, stop2 := b.start(t, cfg)
				eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, "a is taken again and acked")
				stop2()

				want := []string{"a@default#1", "b@default#1", "c@default#1"}
				if crossQueue {
					want[1] = "b@second#1"
				}
				require.Equal(t, want, s.list(), "no link ran twice")
				require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
				require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "second"))
				require.Len(t, b.log.of(runtime.JobQueued), 3, "each link was pushed once")
			})
		})
	}
}

// TestChainPartitionedQueue: links pushed to a partitioned queue land on
// a partition chosen by their ID, and every link runs once.
func TestChainPartitionedQueue(t *testing.T) {
	forEachBusBackend(t, runtime.EngineConfig{Partitions: map[string]int{"parts": 4}}, func(t *testing.T, b wbundle, _ redistest.Backend) {
		var s steps
		s.register(b.router)
		var jobs []runtime.Job
		for i := range 12 {
			jobs = append(jobs, stepJob{Step: fmt.Sprint(i), Q: "parts"})
		}
		_, err := runtime.Chain(jobs...).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"parts"}, StopWhenEmpty: true})
		var got, want []string
		partitions := map[string]bool{}
		for i, r := range s.list() {
			step, queue, _ := cut(r, "@")
			got, want = append(got, step), append(want, fmt.Sprint(i))
			require.True(t, strings.HasPrefix(queue, "parts") && strings.HasSuffix(queue, "#1"), r)
			partitions[queue] = true
		}
		require.Equal(t, want, got)
		require.Greater(t, len(partitions), 1, "the links spread over partitions: %v", s.list())
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "parts"))
	})
}
