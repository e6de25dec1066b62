package faults_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestModel drives the engine with random sequences of operations —
// push, delayed push, reserve under a short or long lease, ack, release,
// fail and extend with current and stale references, migrate, retry and
// forget failed jobs, clear, pause and resume — and checks every reply,
// and after every step the queue's sizes and keys, against an in-memory
// model of the queue. The property-test driver is pgregory.net/rapid,
// which shrinks a failing sequence to a short one.
//
// Time is kept out of the model: a short lease or delay is 1 ms followed
// by a 3 ms sleep, so it has certainly run out; a long one is an hour.
func TestModel(t *testing.T) {
	if harness.Long {
		_ = flag.Set("rapid.checks", "2000")
	}
	for _, backend := range []string{"redis", "embedded"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			url := fmt.Sprintf("embedded://model-%p", t)
			if backend == "redis" {
				url = harness.StartRedis(t).URL()
			}
			e, err := runtime.Open(context.Background(), url, runtime.EngineConfig{Prefix: "faults", FailedMaxCount: -1})
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })
			var runs, steps atomic.Int64
			rapid.Check(t, func(rt *rapid.T) {
				m := &model{e: e, queue: fmt.Sprintf("model-%d", runs.Add(1)), jobs: map[string]*mjob{}}
				rt.Repeat(map[string]func(*rapid.T){
					"push":          m.push,
					"later":         m.later,
					"reserve":       m.reserve,
					"ack":           m.ack,
					"release":       m.release,
					"fail":          m.fail,
					"extend":        m.extend,
					"migrate":       m.migrate,
					"retry failed":  m.retryFailed,
					"forget failed": m.forget,
					"clear":         m.clear,
					"pause":         m.pause,
					"": func(rt *rapid.T) {
						steps.Add(1)
						m.check(rt)
					},
				})
			})
			t.Logf("figures (%s): %d runs, %d steps checked against the model, 0 violations", backend, runs.Load(), steps.Load())
		})
	}
}

type jstate int

const (
	sReady jstate = iota
	sDelayed
	sReserved
	sFailed
	sGone
)

// mjob is the model of one job.
type mjob struct {
	id                   string
	state                jstate
	due                  bool // delayed and due
	expired              bool // reserved and its lease has run out
	token                string
	attempts, exceptions int
	payload              []byte
	order                int // when it last joined the ready list, for FIFO
	scored               int // when its due time or lease deadline was set
}

type model struct {
	e      *runtime.Engine
	queue  string
	jobs   map[string]*mjob
	ids    []string      // every job, in push order
	refs   []runtime.Ref // every reservation handed out
	paused bool
	clock  int
}

var ctxb = context.Background()

const short = time.Millisecond

// runOut sleeps until every 1ms lease and delay has certainly run out.
func runOut() { time.Sleep(3 * time.Millisecond) }

func (m *model) count(s jstate) int64 {
	n := int64(0)
	for _, j := range m.jobs {
		if j.state == s {
			n++
		}
	}
	return n
}

func (m *model) pick(rt *rapid.T, label string, ok func(*mjob) bool) *mjob {
	var c []string
	for _, id := range m.ids {
		if ok(m.jobs[id]) {
			c = append(c, id)
		}
	}
	if len(c) == 0 {
		rt.Skip("no job for " + label)
	}
	return m.jobs[rapid.SampledFrom(c).Draw(rt, label)]
}

func (m *model) add(rt *rapid.T) *runtime.Envelope {
	body := rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(rt, "body")
	env := &runtime.Envelope{Name: "model.Job", Queue: m.queue, Body: body}
	return env
}

func (m *model) enqueue(env *runtime.Envelope, st jstate, due bool) {
	b, _ := env.Encode()
	m.clock++
	m.jobs[env.ID] = &mjob{id: env.ID, state: st, due: due, payload: b, order: m.clock, scored: m.clock}
	m.ids = append(m.ids, env.ID)
}

func (m *model) push(rt *rapid.T) {
	env := m.add(rt)
	if err := m.e.Push(ctxb, env); err != nil {
		rt.Fatalf("push: %v", err)
	}
	m.enqueue(env, sReady, false)
}

func (m *model) later(rt *rapid.T) {
	env := m.add(rt)
	due := rapid.Bool().Draw(rt, "due")
	delay := time.Hour
	if due {
		delay = short
	}
	if err := m.e.Later(ctxb, env, delay); err != nil {
		rt.Fatalf("later: %v", err)
	}
	if due {
		runOut()
	}
	m.enqueue(env, sDelayed, due)
}

// migrateModel does what a migrate does to the model, and returns how
// many delayed and expired jobs moved. A migrate appends the due delayed
// jobs, then the expired ones, each in score order, ties by ID. Every
// short delay or lease is followed by a sleep, so scores set by
// different steps differ and follow the steps' order.
func (m *model) migrateModel() (delayed, expired int) {
	var due, exp []*mjob
	for _, j := range m.jobs {
		switch {
		case j.state == sDelayed && j.due:
			due = append(due, j)
		case j.state == sReserved && j.expired:
			exp = append(exp, j)
		}
	}
	byScore := func(a, b *mjob) int {
		if a.scored != b.scored {
			return a.scored - b.scored
		}
		return strings.Compare(a.id, b.id)
	}
	slices.SortFunc(due, byScore)
	slices.SortFunc(exp, byScore)
	for _, j := range append(due, exp...) {
		m.clock++
		j.state, j.due, j.expired, j.token, j.order = sReady, false, false, "", m.clock
	}
	return len(due), len(exp)
}

func (m *model) ready() []*mjob {
	var r []*mjob
	for _, j := range m.jobs {
		if j.state == sReady {
			r = append(r, j)
		}
	}
	slices.SortFunc(r, func(a, b *mjob) int { return a.order - b.order })
	return r
}

func (m *model) reserve(rt *rapid.T) {
	n := rapid.IntRange(1, 4).Draw(rt, "n")
	long := rapid.Bool().Draw(rt, "long lease")
	lease := short
	if long {
		lease = time.Hour
	}
	before := m.ready()
	batch, err := runtime.NewBroker(m.e).Reserve(ctxb, m.queue, n, lease)
	if err != nil {
		rt.Fatalf("reserve: %v", err)
	}
	m.migrateModel()
	ready := m.ready()
	want := min(n, len(ready))
	if m.paused {
		want = 0
	}
	if len(batch.Jobs) != want {
		rt.Fatalf("reserve %d: got %d jobs, want %d (paused %v)", n, len(batch.Jobs), want, m.paused)
	}
	for i, r := range batch.Jobs {
		// Jobs that were ready before come first, oldest first; the
		// order of jobs moved by the migrate depends on times the model
		// does not keep.
		if i < len(before) && r.ID != before[i].id {
			rt.Fatalf("reserve: job %d is %s, want the oldest ready %s", i, r.ID, before[i].id)
		}
		j := m.jobs[r.ID]
		if j == nil || j.state != sReady {
			rt.Fatalf("reserve returned %s, which is not ready in the model", r.ID)
		}
		j.attempts++
		// The stored payload leaves out what the queue tells: compare the
		// envelope it decodes to, encoded whole.
		var whole []byte
		if env, err := runtime.DecodeEnvelope(r.Queue, r.ID, r.Payload); err == nil {
			whole, _ = env.Encode()
		}
		if r.Attempts != j.attempts || r.Exceptions != j.exceptions || string(whole) != string(j.payload) {
			rt.Fatalf("reserve %s: attempts %d exceptions %d, want %d %d (payload equal %v)",
				r.ID, r.Attempts, r.Exceptions, j.attempts, j.exceptions, string(whole) == string(j.payload))
		}
		j.state, j.token, j.expired = sReserved, r.Token, !long
		m.refs = append(m.refs, r.Ref)
	}
	if !long {
		m.clock++
		for _, r := range batch.Jobs {
			m.jobs[r.ID].scored = m.clock
		}
		runOut()
	}
}

// ref draws a reference handed out before, current or stale, and says
// whether it is current.
func (m *model) ref(rt *rapid.T) (runtime.Ref, *mjob, bool) {
	if len(m.refs) == 0 {
		rt.Skip("no reservation yet")
	}
	r := rapid.SampledFrom(m.refs).Draw(rt, "ref")
	j := m.jobs[r.ID]
	return r, j, j.state == sReserved && j.token == r.Token
}

func (m *model) settled(rt *rapid.T, op string, err error, current bool) bool {
	switch {
	case current && err != nil:
		rt.Fatalf("%s with the current token: %v", op, err)
	case !current && !errors.Is(err, runtime.ErrLeaseLost):
		rt.Fatalf("%s with a stale token: want ErrLeaseLost, got %v", op, err)
	}
	return current
}

func (m *model) ack(rt *rapid.T) {
	r, j, current := m.ref(rt)
	if m.settled(rt, "ack", runtime.NewBroker(m.e).Ack(ctxb, r), current) {
		j.state, j.token = sGone, ""
	}
}

func (m *model) release(rt *rapid.T) {
	r, j, current := m.ref(rt)
	delay := rapid.SampledFrom([]time.Duration{0, short, time.Hour}).Draw(rt, "delay")
	exc := rapid.Bool().Draw(rt, "exception")
	err := runtime.NewBroker(m.e).Release(ctxb, runtime.ReleaseOpts{Delay: delay, Exception: exc}, r)
	if !m.settled(rt, "release", err, current) {
		return
	}
	j.token, j.expired = "", false
	if exc {
		j.exceptions++
	}
	if delay == 0 {
		m.clock++
		j.state, j.order = sReady, m.clock
		return
	}
	m.clock++
	j.state, j.due, j.scored = sDelayed, delay == short, m.clock
	if j.due {
		runOut()
	}
}

func (m *model) fail(rt *rapid.T) {
	r, j, current := m.ref(rt)
	err := runtime.NewBroker(m.e).Fail(ctxb, runtime.Failure{Ref: r, Name: "model.Job", Err: errors.New("model"), Attempts: j.attempts})
	if m.settled(rt, "fail", err, current) {
		j.state, j.token, j.expired = sFailed, "", false
	}
}

func (m *model) extend(rt *rapid.T) {
	r, j, current := m.ref(rt)
	lost, err := runtime.NewBroker(m.e).Extend(ctxb, time.Hour, r)
	if err != nil {
		rt.Fatalf("extend: %v", err)
	}
	if current != (len(lost) == 0) {
		rt.Fatalf("extend: current %v, lost %v", current, lost)
	}
	if current {
		j.expired = false
	}
}

func (m *model) migrate(rt *rapid.T) {
	got, err := runtime.NewBroker(m.e).Migrate(ctxb, m.queue)
	if err != nil {
		rt.Fatalf("migrate: %v", err)
	}
	d, x := m.migrateModel()
	if got.Delayed != d || got.Expired != x {
		rt.Fatalf("migrate moved %d delayed and %d expired, want %d and %d", got.Delayed, got.Expired, d, x)
	}
}

func (m *model) retryFailed(rt *rapid.T) {
	j := m.pick(rt, "failed job", func(j *mjob) bool { return j.state == sFailed })
	got, err := runtime.NewInspector(m.e).Failed().Retry(ctxb, m.queue, j.id)
	if err != nil || !slices.Equal(got, []string{j.id}) {
		rt.Fatalf("retry %s: %v %v", j.id, got, err)
	}
	m.clock++
	j.state, j.order, j.attempts, j.exceptions = sReady, m.clock, 0, 0
}

func (m *model) forget(rt *rapid.T) {
	j := m.pick(rt, "failed job", func(j *mjob) bool { return j.state == sFailed })
	n, err := runtime.NewInspector(m.e).Failed().Forget(ctxb, m.queue, j.id)
	if err != nil || n != 1 {
		rt.Fatalf("forget %s: %d %v", j.id, n, err)
	}
	j.state = sGone
}

func (m *model) clear(rt *rapid.T) {
	n, err := runtime.NewInspector(m.e).ClearQueue(ctxb, m.queue)
	if err != nil {
		rt.Fatalf("clear: %v", err)
	}
	want := int64(0)
	for _, j := range m.jobs {
		if j.state == sReady || j.state == sDelayed || j.state == sReserved {
			want++
			j.state, j.token = sGone, ""
		}
	}
	if n != want {
		rt.Fatalf("clear: %d jobs, want %d", n, want)
	}
}

func (m *model) pause(rt *rapid.T) {
	var err error
	if m.paused {
		err = runtime.NewInspector(m.e).ResumeQueue(ctxb, m.queue)
	} else {
		err = runtime.NewInspector(m.e).PauseQueue(ctxb, m.queue)
	}
	if err != nil {
		rt.Fatalf("pause/resume: %v", err)
	}
	m.paused = !m.paused
}

// check compares the queue with the model.
func (m *model) check(rt *rapid.T) {
	s, err := runtime.NewInspector(m.e).Sizes(ctxb, m.queue)
	if err != nil {
		rt.Fatalf("sizes: %v", err)
	}
	want := runtime.Sizes{Ready: m.count(sReady), Delayed: m.count(sDelayed), Reserved: m.count(sReserved), Failed: m.count(sFailed)}
	if s != want {
		rt.Fatalf("sizes %+v, model %+v", s, want)
	}
	problems, err := harness.Audit(ctxb, m.e.Client(), "faults", m.queue)
	if err != nil || len(problems) > 0 {
		rt.Fatalf("audit: %v %v", problems, err)
	}
}
