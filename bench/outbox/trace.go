package outboxbench

import (
	"context"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/outbox"
)

// Trace is where a jobgen relay's time went: what one relay pass costs,
// statement by statement and command by command; and in the latency
// phase each job's time split at the relay's wake and at the end of its
// push.
type Trace struct {
	// Passes counts the relay's claims.
	Passes int
	// Ops are the relay's statements and the Redis commands of the relay
	// and the worker, most time first.
	Ops []OpStat
	// CommitToWake, WakeToPushed and PushedToStart are medians over the
	// jobs: from just before Commit to the relay's wake, by LISTEN or at
	// the end of its cooldown, from
	// then to the end of the push that carried the job to Redis, and from
	// then to the handler's start.
	CommitToWake, WakeToPushed, PushedToStart time.Duration

	// Each job's three parts, sorted, to pool rounds.
	toWake, toPushed, toStart []time.Duration
}

// merge returns t and u pooled: the calls of both, and the medians of
// both rounds' jobs. Either may be nil.
func (t *Trace) merge(u *Trace) *Trace {
	switch {
	case t == nil:
		return u
	case u == nil:
		return t
	}
	m := &Trace{Passes: t.Passes + u.Passes}
	sums := map[string]*opSum{}
	var names []string
	for _, o := range append(slices.Clone(t.Ops), u.Ops...) {
		s := sums[o.Name]
		if s == nil {
			s = &opSum{}
			sums[o.Name] = s
			names = append(names, o.Name)
		}
		s.n += o.Calls
		s.total += time.Duration(o.Calls) * o.Mean
	}
	for _, name := range names {
		s := sums[name]
		m.Ops = append(m.Ops, OpStat{Name: name, Calls: s.n, Mean: s.total / time.Duration(s.n)})
	}
	sortOps(m.Ops)
	m.setSplit(append(slices.Clone(t.toWake), u.toWake...), append(slices.Clone(t.toPushed), u.toPushed...),
		append(slices.Clone(t.toStart), u.toStart...))
	return m
}

// setSplit sets the medians of each job's three parts.
func (t *Trace) setSplit(toWake, toPushed, toStart []time.Duration) {
	for _, xs := range [][]time.Duration{toWake, toPushed, toStart} {
		slices.Sort(xs)
	}
	t.toWake, t.toPushed, t.toStart = toWake, toPushed, toStart
	t.CommitToWake, t.WakeToPushed, t.PushedToStart = quantile(toWake, 0.5), quantile(toPushed, 0.5), quantile(toStart, 0.5)
}

// sortOps sorts ops by the time they took, most first.
func sortOps(ops []OpStat) {
	sort.Slice(ops, func(i, j int) bool {
		return time.Duration(ops[i].Calls)*ops[i].Mean > time.Duration(ops[j].Calls)*ops[j].Mean
	})
}

// OpStat is one kind of statement or command.
type OpStat struct {
	// Name is a statement's first words, or a command's name; a script
	// is named by its keys.
	Name string
	// Calls counts them; Mean is their mean time, from the call to the
	// answer.
	Calls int
	Mean  time.Duration
}

// tracer records a jobgen relay's statements (a pgx.QueryTracer on its
// pool), the Redis commands of the run (a go-redis hook), and the
// relay's wakes, while on.
type tracer struct {
	on atomic.Pointer[traceLog]
}

// traceLog is what one traced phase recorded.
type traceLog struct {
	base   time.Time
	mu     sync.Mutex
	ops    map[string]*opSum
	wakes  []time.Duration // when the relay's Wait returned
	pushes []time.Duration // when outbox_push calls returned
}

type opSum struct {
	n     int
	total time.Duration
}

func (l *traceLog) add(name string, d time.Duration, end time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.ops[name]
	if s == nil {
		s = &opSum{}
		l.ops[name] = s
	}
	s.n++
	s.total += d
	if name == "redis outbox_push" {
		l.pushes = append(l.pushes, end.Sub(l.base))
	}
}

// start begins a log, its times set against base.
func (t *tracer) start(base time.Time) {
	t.on.Store(&traceLog{base: base, ops: map[string]*opSum{}})
}

// stop ends the log and returns it.
func (t *tracer) stop() *traceLog { return t.on.Swap(nil) }

type traceStartKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.on.Load() == nil {
		return ctx
	}
	return context.WithValue(ctx, traceStartKey{}, traceStart{time.Now(), statementName(data.SQL)})
}

type traceStart struct {
	at   time.Time
	name string
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	s, ok := ctx.Value(traceStartKey{}).(traceStart)
	l := t.on.Load()
	if !ok || l == nil {
		return
	}
	now := time.Now()
	l.add("pg "+s.name, now.Sub(s.at), now)
}

// statementName names a statement by its first words.
func statementName(sql string) string {
	f := strings.Fields(sql)
	switch {
	case len(f) == 0:
		return "(empty)"
	case strings.EqualFold(f[0], "SELECT") && len(f) > 1 && f[1] == "seq,":
		return "SELECT … FOR UPDATE SKIP LOCKED (claim)"
	case strings.EqualFold(f[0], "SET") || strings.EqualFold(f[0], "DELETE"):
		return strings.Join(f[:min(2, len(f))], " ") + " …"
	default:
		return strings.ToUpper(f[0])
	}
}

// DialHook implements redis.Hook.
func (t *tracer) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook implements redis.Hook.
func (t *tracer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l := t.on.Load()
		if l == nil {
			return next(ctx, cmd)
		}
		t0 := time.Now()
		err := next(ctx, cmd)
		now := time.Now()
		l.add("redis "+commandName(cmd), now.Sub(t0), now)
		return err
	}
}

// ProcessPipelineHook implements redis.Hook: a pipeline counts as one
// call of each of its commands, each taking the pipeline's time.
func (t *tracer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		l := t.on.Load()
		if l == nil {
			return next(ctx, cmds)
		}
		t0 := time.Now()
		err := next(ctx, cmds)
		now := time.Now()
		for _, c := range cmds {
			l.add("redis "+commandName(c), now.Sub(t0), now)
		}
		return err
	}
}

// commandName names a command; a script by the jobgen script its keys
// belong to, where known.
func commandName(cmd redis.Cmder) string {
	name := strings.ToLower(cmd.Name())
	if name != "evalsha" && name != "eval" {
		return name
	}
	args := cmd.Args()
	if len(args) < 3 {
		return name
	}
	n, _ := args[2].(int)
	keys := make([]string, 0, n)
	for _, a := range args[3:min(len(args), 3+n)] {
		if s, ok := a.(string); ok {
			keys = append(keys, s[strings.LastIndexByte(s, ':')+1:])
		}
	}
	switch {
	case n == 5 && (keys[0] == "relayed" || keys[4] == "relayed"):
		return "outbox_push"
	case n == 1 && keys[0] == "relayed":
		return "outbox_release"
	case n == 8 && keys[0] == "ready":
		return "reserve"
	}
	return "script(" + strings.Join(keys, ",") + ")"
}

// wakeRecorder records when a relay's wait ended: woken by its Notifier,
// or at the end of its cooldown (RelayConfig.Cooldown).
type wakeRecorder struct {
	n outbox.Notifier
	t *tracer
}

func (w wakeRecorder) Wait(ctx context.Context) error {
	err := w.n.Wait(ctx)
	if l := w.t.on.Load(); l != nil && (err == nil || ctx.Err() == context.DeadlineExceeded) {
		at := time.Since(l.base)
		l.mu.Lock()
		l.wakes = append(l.wakes, at)
		l.mu.Unlock()
	}
	return err
}

// summary sums the log up, with the jobs' commit and start times if tr
// is not nil.
func (l *traceLog) summary(tr *tracker) *Trace {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &Trace{}
	for name, s := range l.ops {
		t.Ops = append(t.Ops, OpStat{Name: name, Calls: s.n, Mean: s.total / time.Duration(s.n)})
		if strings.Contains(name, "(claim)") {
			t.Passes = s.n
		}
	}
	sortOps(t.Ops)
	if tr == nil {
		return t
	}
	slices.Sort(l.wakes)
	slices.Sort(l.pushes)
	var toWake, toPush, toStart []time.Duration
	for i := range tr.start {
		c, s := time.Duration(tr.commit[i].Load()), time.Duration(tr.start[i].Load())
		if c == 0 || s == 0 {
			continue
		}
		w, ok := after(l.wakes, c)
		if !ok || w > s {
			continue
		}
		p, ok := after(l.pushes, w)
		if !ok || p > s {
			continue
		}
		toWake, toPush, toStart = append(toWake, w-c), append(toPush, p-w), append(toStart, s-p)
	}
	t.setSplit(toWake, toPush, toStart)
	return t
}

// after returns the first of sorted at or after t.
func after(sorted []time.Duration, t time.Duration) (time.Duration, bool) {
	i, _ := slices.BinarySearch(sorted, t)
	if i == len(sorted) {
		return 0, false
	}
	return sorted[i], true
}
