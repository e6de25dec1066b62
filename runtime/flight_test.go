package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// pushGate, through beforeCalls(pass), holds push script calls while
// shut, and records how many jobs each push call carried.
type pushGate struct {
	mu    sync.Mutex
	shut  chan struct{} // nil when open
	held  int
	calls []int // jobs per push call, in the order sent
	// panics, if set, counts down the push calls to pass; the one that
	// brings it to zero panics.
	panics int
}

// close shuts the gate, and starts its counts afresh.
func (g *pushGate) close() {
	g.mu.Lock()
	g.shut = make(chan struct{})
	g.held, g.calls = 0, nil
	g.mu.Unlock()
}

func (g *pushGate) open() {
	g.mu.Lock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
	g.mu.Unlock()
}

// holding returns the number of calls held so far.
func (g *pushGate) holding() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// sent returns the jobs of each push call sent so far.
func (g *pushGate) sent() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// pass records cmds' push calls and waits while the gate is shut, if any
// is one.
func (g *pushGate) pass(cmds ...redis.Cmder) {
	var wait chan struct{}
	var panics bool
	g.mu.Lock()
	for _, c := range cmds {
		args := c.Args()
		if len(args) < 9 || fmt.Sprint(args[0]) != "evalsha" {
			continue
		}
		// evalsha, sha, numkeys, the keys, keep and nonce, then the
		// number of jobs (lib/enqueue.lua)
		if fmt.Sprint(args[1]) != runtime.ScriptSHA("push") {
			continue
		}
		nk, _ := strconv.Atoi(fmt.Sprint(args[2]))
		n, _ := strconv.Atoi(fmt.Sprint(args[3+nk+2]))
		g.calls = append(g.calls, n)
		if g.shut != nil && wait == nil {
			wait = g.shut
			g.held++
		}
		if g.panics > 0 {
			g.panics--
			panics = g.panics == 0
		}
	}
	g.mu.Unlock()
	if wait != nil {
		<-wait
	}
	if panics {
		panic("push gate: a hook panics")
	}
}

// flightBundle is an engine whose pushes pass a gate.
type flightBundle struct {
	bundle
	gate *pushGate
}

func forEachFlightBackend(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b flightBundle)) {
	forEachBackend(t, cfg, func(t *testing.T, b bundle) {
		g := &pushGate{}
		b.rdb.AddHook(beforeCalls(g.pass))
		t.Cleanup(g.open)
		fn(t, flightBundle{bundle: b, gate: g})
	})
}

// fill shuts the gate and starts as many pushes as may fly at once,
// which it holds, so that the pushes after them wait. Each goes out
// alone, at once.
func (b flightBundle) fill(t *testing.T, e *runtime.Engine, queue string) (done func() error) {
	t.Helper()
	b.gate.close()
	out := make(chan error, runtime.PushFlightsAtOnce)
	for i := range runtime.PushFlightsAtOnce {
		go func() { out <- e.Push(b.ctx, env(queue, "app.Held", fmt.Sprint("held ", i))) }()
		require.Eventually(t, func() bool { return b.gate.holding() == i+1 }, 10*time.Second, time.Millisecond)
		require.Zero(t, runtime.WaitingPushes(e), "push %d of %d goes out without waiting", i+1, runtime.PushFlightsAtOnce)
	}
	return func() error {
		var errs []error
		for range runtime.PushFlightsAtOnce {
			errs = append(errs, <-out)
		}
		return errors.Join(errs...)
	}
}

// heldCalls is what the gate sent for fill's pushes: one job a call.
func heldCalls() []int { return slices.Repeat([]int{1}, runtime.PushFlightsAtOnce) }

// queued starts push in a goroutine and waits until it waits for a
// flight, as the n-th push waiting.
func queued(t *testing.T, e *runtime.Engine, n int, push func() error) <-chan error {
	t.Helper()
	out := make(chan error, 1)
	go func() { out <- push() }()
	require.Eventually(t, func() bool { return runtime.WaitingPushes(e) == n }, 10*time.Second, time.Millisecond)
	return out
}

// readyIDs reserves every ready job of queue and returns their IDs.
func readyIDs(t *testing.T, b bundle, queue string) []string {
	t.Helper()
	var ids []string
	for _, j := range mustReserve(t, b, queue, 10_000).Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func TestPushesWaitingShareCalls(t *testing.T) {
	forEachFlightBackend(t, runtime.EngineConfig{}, func(t *testing.T, b flightBundle) {
		held := b.fill(t, b.engine, "default")
		const n = 40
		var outs []<-chan error
		var want []string
		for i := range n {
			e := env("default", "app.Job", fmt.Sprint(i))
			e.ID = fmt.Sprintf("job-%02d", i)
			want = append(want, e.ID)
			outs = append(outs, queued(t, b.engine, i+1, func() error { return b.engine.Push(b.ctx, e) }))
		}
		b.gate.open()
		require.NoError(t, held())
		for _, out := range outs {
			require.NoError(t, <-out)
		}
		require.Equal(t, append(heldCalls(), n), b.gate.sent(), "the pushes that waited went out in one call")

		ids := readyIDs(t, b.bundle, "default")
		require.Len(t, ids, n+runtime.PushFlightsAtOnce)
		ids = slices.DeleteFunc(ids, func(id string) bool { return !strings.HasPrefix(id, "job-") })
		require.Equal(t, want, ids, "each job once, in the order pushed")
	})
}

func TestWaitingPushesFillFlightsOfAtMost500Jobs(t *testing.T) {
	forEachFlightBackend(t, runtime.EngineConfig{}, func(t *testing.T, b flightBundle) {
		held0 := b.fill(t, b.engine, "default")
		bulk := func(i int) func() error {
			out := make([]runtime.Outgoing, 100)
			for k := range out {
				out[k] = runtime.Outgoing{Envelope: env("default", "app.Job", fmt.Sprint(i, "/", k))}
			}
			return func() error { return b.engine.PushMany(b.ctx, out) }
		}
		var outs []<-chan error
		for i := range 6 {
			outs = append(outs, queued(t, b.engine, i+1, bulk(i)))
		}
		b.gate.open()
		require.NoError(t, held0())
		for _, out := range outs {
			require.NoError(t, <-out)
		}
		sent := b.gate.sent()
		require.Equal(t, heldCalls(), sent[:runtime.PushFlightsAtOnce])
		require.ElementsMatch(t, []int{500, 100}, sent[runtime.PushFlightsAtOnce:],
			"the first five waiting fill one flight, the sixth flies in another; flights land in any order")
		require.Equal(t, int64(600+runtime.PushFlightsAtOnce), sizes(t, b.bundle, "default").Ready)
	})
}

func TestPushesWaitingToManyQueues(t *testing.T) {
	cfg := runtime.EngineConfig{Partitions: map[string]int{"parts": 3}}
	forEachFlightBackend(t, cfg, func(t *testing.T, b flightBundle) {
		held := b.fill(t, b.engine, "default")
		type push struct {
			queue string
			delay time.Duration
		}
		pushes := []push{{"a", 0}, {"b", 0}, {"a", time.Hour}, {"parts", 0}, {"a", 0}, {"parts", 0}, {"b", time.Hour},
			{"parts", 0}, {"a", time.Hour}, {"c", 0}, {"d", 0}, {"c", 0}, {"a", 0}}
		var outs []<-chan error
		for i, p := range pushes {
			e := env(p.queue, "app.Job", fmt.Sprint(i))
			outs = append(outs, queued(t, b.engine, i+1, func() error { return b.engine.Later(b.ctx, e, p.delay) }))
		}
		b.gate.open()
		require.NoError(t, held())
		for _, out := range outs {
			require.NoError(t, <-out)
		}
		require.Equal(t, runtime.Sizes{Ready: 3, Delayed: 2}, sizes(t, b.bundle, "a"))
		require.Equal(t, runtime.Sizes{Ready: 1, Delayed: 1}, sizes(t, b.bundle, "b"))
		require.Equal(t, runtime.Sizes{Ready: int64(runtime.PushFlightsAtOnce)}, sizes(t, b.bundle, "default"))
		require.Equal(t, runtime.Sizes{Ready: 2}, sizes(t, b.bundle, "c"))
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b.bundle, "d"))
		require.Equal(t, runtime.Sizes{Ready: 3}, sizes(t, b.bundle, "parts"))
		require.Equal(t, append(heldCalls(), 3, 1, 2, 1, 1, 1, 1, 2, 1), b.gate.sent(),
			"the ones held, then one call per queue, partition and delay: a, b, a later, parts#0..2, b later, c, d")
	})
}

func TestPushWaitingFailsAlone(t *testing.T) {
	forEachFlightBackend(t, runtime.EngineConfig{MaxPayload: 1000}, func(t *testing.T, b flightBundle) {
		// With 40 jobs more in the flight, its call keeps its job IDs in a
		// map rather than looking through its pushes.
		for _, more := range []int{0, 40} {
			t.Run(fmt.Sprint(more, " more"), func(t *testing.T) { pushWaitingFailsAlone(t, b, more) })
		}
	})
}

func pushWaitingFailsAlone(t *testing.T, b flightBundle, more int) {
	q := fmt.Sprint("q", more)
	first := env(q, "app.Job", "first")
	first.ID = "taken"
	require.NoError(t, b.engine.Push(b.ctx, first))
	again := *first // the same job pushed again: a retry, which adds nothing

	held := b.fill(t, b.engine, q)
	var outs []<-chan error
	if more > 0 {
		bulk := make([]runtime.Outgoing, more)
		for i := range bulk {
			bulk[i] = runtime.Outgoing{Envelope: env(q, "app.Job", fmt.Sprint("more ", i))}
		}
		outs = append(outs, queued(t, b.engine, 1, func() error { return b.engine.PushMany(b.ctx, bulk) }))
	}
	clash := env(q, "app.Job", "another payload")
	clash.ID = "taken"
	twin := env(q, "app.Job", "twin")
	twin.ID = "twin"
	twin.DispatchedAt = time.Now().UnixMilli()
	twinClash := env(q, "app.Job", "twin's rival")
	twinClash.ID = "twin"
	twinAgain := *twin
	pushes := []*runtime.Envelope{
		env(q, "app.Job", "0"), clash, env(q, "app.Job", "1"), &again,
		twin, env(q, "app.Job", "2"), twinClash, &twinAgain, env(q, "app.Job", "3"),
	}
	for _, e := range pushes {
		outs = append(outs, queued(t, b.engine, len(outs)+1, func() error { return b.engine.Push(b.ctx, e) }))
	}
	// Too large: refused before it waits, and no other push knows.
	err := b.engine.Push(b.ctx, env(q, "app.Job", strings.Repeat("x", 1000)))
	require.ErrorIs(t, err, runtime.ErrPayloadTooLarge)
	b.gate.open()
	require.NoError(t, held())

	if more > 0 {
		require.NoError(t, <-outs[0])
		outs = outs[1:]
	}
	for i, out := range outs {
		err := <-out
		switch pushes[i] {
		case clash, twinClash:
			require.ErrorIs(t, err, runtime.ErrIDTaken, "push %d", i)
		default:
			require.NoError(t, err, "push %d", i)
		}
	}
	ids := readyIDs(t, b.bundle, q)
	require.Len(t, ids, 1+runtime.PushFlightsAtOnce+5+more, "first, the ones held, four new jobs, twin and the more, each once")
	require.Equal(t, 1, countOf(ids, "taken"))
	require.Equal(t, 1, countOf(ids, "twin"))
	for id, body := range map[string]string{"taken": "first", "twin": "twin"} {
		payload, err := b.rdb.HGet(b.ctx, b.prefix+":{"+q+"}:payloads", id).Result()
		require.NoError(t, err)
		got, err := runtime.DecodeEnvelope("default", id, []byte(payload))
		require.NoError(t, err)
		require.Equal(t, body, string(got.Body), "the first push of an ID wins")
	}
}

func countOf(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

func TestPushWaitingCancelled(t *testing.T) {
	forEachFlightBackend(t, runtime.EngineConfig{}, func(t *testing.T, b flightBundle) {
		held := b.fill(t, b.engine, "default")
		ctx, cancel := context.WithCancel(b.ctx)
		gone := env("default", "app.Job", "gone")
		out := queued(t, b.engine, 1, func() error { return b.engine.Push(ctx, gone) })
		kept := env("default", "app.Job", "kept")
		keptOut := queued(t, b.engine, 2, func() error { return b.engine.Push(b.ctx, kept) })

		cancel()
		select {
		case err := <-out:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			t.Fatal("a push cancelled while it waits must return at once")
		}
		require.Equal(t, 1, runtime.WaitingPushes(b.engine))
		b.gate.open()
		require.NoError(t, held())
		require.NoError(t, <-keptOut)

		ids := readyIDs(t, b.bundle, "default")
		require.Len(t, ids, runtime.PushFlightsAtOnce+1)
		require.Contains(t, ids, kept.ID)
		require.NotContains(t, ids, gone.ID, "a withdrawn push sends nothing")

		// A context done before the push is refused at once.
		err := b.engine.Push(ctx, env("default", "app.Job", "late"))
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, runtime.Sizes{Reserved: int64(runtime.PushFlightsAtOnce + 1)}, sizes(t, b.bundle, "default"))
	})
}

func TestCloseSendsWaitingPushes(t *testing.T) {
	forEachFlightBackend(t, runtime.EngineConfig{}, func(t *testing.T, b flightBundle) {
		// An engine on the bundle's client, which its Close leaves open.
		e, err := runtime.NewEngine(b.ctx, b.rdb, b.engine.Config())
		require.NoError(t, err)
		held := b.fill(t, e, "default")
		var outs []<-chan error
		for i := range 5 {
			j := env("default", "app.Job", fmt.Sprint(i))
			outs = append(outs, queued(t, e, i+1, func() error { return e.Push(b.ctx, j) }))
		}
		closed := make(chan error, 1)
		go func() { closed <- e.Close() }()
		select {
		case <-closed:
			t.Fatal("Close returned with pushes in flight")
		case <-time.After(50 * time.Millisecond):
		}
		b.gate.open()
		require.NoError(t, <-closed)
		require.Equal(t, int64(runtime.PushFlightsAtOnce+5), sizes(t, b.bundle, "default").Ready, "Close returns once every push waiting was sent")
		require.NoError(t, held())
		for _, out := range outs {
			require.NoError(t, <-out)
		}

		// After Close, a push goes out alone on the client.
		require.NoError(t, e.Push(b.ctx, env("default", "app.Job", "after")))
		require.Equal(t, int64(runtime.PushFlightsAtOnce+6), sizes(t, b.bundle, "default").Ready)
	})
}

func TestConcurrentPushesLandOnce(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{Partitions: map[string]int{"parts": 2}}, func(t *testing.T, b bundle) {
		const producers, each = 8, 100
		queues := []string{"default", "parts", "other"}
		var wg sync.WaitGroup
		errs := make(chan error, producers*each)
		for p := range producers {
			wg.Go(func() {
				for i := range each {
					e := env(queues[(p+i)%len(queues)], "app.Job", fmt.Sprint(p, "/", i))
					e.ID = fmt.Sprintf("p%d-%03d", p, i)
					var delay time.Duration
					if i%5 == 0 {
						delay = time.Hour
					}
					errs <- b.engine.Later(b.ctx, e, delay)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		seen := map[string]int{}
		total := runtime.Sizes{}
		for _, q := range queues {
			s := sizes(t, b, q)
			total.Ready += s.Ready
			total.Delayed += s.Delayed
			for _, id := range readyIDs(t, b, q) {
				seen[id]++
			}
		}
		require.Equal(t, runtime.Sizes{Ready: producers * each * 4 / 5, Delayed: producers * each / 5}, total)
		require.Len(t, seen, producers*each*4/5)
		for id, n := range seen {
			require.Equal(t, 1, n, "job %s", id)
		}
	})
}

// TestConcurrentPushesWaitForReplicas pushes from several goroutines to a
// master with one replica: every push waits for it, and one that asks for
// more replicas than there are fails with ErrNotReplicated, though its
// job was pushed.
func TestConcurrentPushesWaitForReplicas(t *testing.T) {
	t.Parallel() // its servers are its own
	ctx := context.Background()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master.Addr)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer rc.Close()
	require.Eventually(t, func() bool {
		info, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 10*time.Second, 20*time.Millisecond, "the replica syncs")

	for _, tc := range []struct {
		replicas int
		timeout  time.Duration
		wantErr  error
	}{{1, 5 * time.Second, nil}, {2, 20 * time.Millisecond, runtime.ErrNotReplicated}} {
		t.Run(fmt.Sprint(tc.replicas, " replicas"), func(t *testing.T) {
			prefix := redistest.Prefix(t)
			e, err := runtime.Open(ctx, "redis://"+master.Addr+"/0", runtime.EngineConfig{Prefix: prefix,
				Replication: runtime.ReplicationConfig{Replicas: tc.replicas, Timeout: tc.timeout}})
			require.NoError(t, err)
			defer e.Close()
			const producers, each = 8, 10
			var wg sync.WaitGroup
			errs := make(chan error, producers*each)
			for p := range producers {
				wg.Go(func() {
					for i := range each {
						errs <- e.Push(ctx, env("replicated", "app.Job", fmt.Sprint(p, "/", i)))
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if tc.wantErr == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tc.wantErr)
				}
			}
			s, err := runtime.NewInspector(e).Sizes(ctx, "replicated")
			require.NoError(t, err)
			require.Equal(t, int64(producers*each), s.Ready)
		})
	}
}

func TestPushFlightPanics(t *testing.T) {
	forEachFlightBackend(t, runtime.EngineConfig{}, func(t *testing.T, b flightBundle) {
		held := b.fill(t, b.engine, "default")
		b.gate.mu.Lock()
		b.gate.panics = 1 // the held push passed already: the shared call panics
		b.gate.mu.Unlock()
		push := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("recovered: %v", p)
				}
			}()
			return b.engine.Push(b.ctx, env("default", "app.Job", "x"))
		}
		var outs []<-chan error
		for i := range 3 {
			outs = append(outs, queued(t, b.engine, i+1, push))
		}
		b.gate.open()
		require.NoError(t, held())
		require.ErrorContains(t, <-outs[0], "recovered: push gate: a hook panics", "the panic goes on in the flight's goroutine")
		for _, out := range outs[1:] {
			require.ErrorContains(t, <-out, "no answer", "the others of the flight get an error")
		}
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "after")), "the engine goes on pushing")
	})
}
