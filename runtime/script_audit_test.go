package runtime_test

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/lua"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/internal/schedule"
	"github.com/jobgen/jobgen/runtime"
)

// TestScriptKeyAudit runs every Lua script of internal/lua/scripts/ on the cluster
// under MONITOR and checks, from the commands each script ran, that every
// key it touched was passed in its KEYS and that all of them share one
// slot. An undeclared key in the same slot works silently on a single
// node or even a cluster, so the keys themselves are checked rather than
// waiting for an error. A script the workload does not run fails the
// test, so a new script must get a step here.
func TestScriptKeyAudit(t *testing.T) {
	if len(redistest.ClusterAddrs()) == 0 {
		t.Skipf("no cluster: set %s (scripts/test does)", redistest.ClusterEnv)
	}
	b := setup(t, redistest.Backend{Name: "cluster", URL: "redis+cluster://" + strings.Join(redistest.ClusterAddrs(), ",")}, runtime.EngineConfig{})
	cc := b.rdb.(*redis.ClusterClient)
	scripts := luaScripts(t)

	mons := startMonitors(t, b.ctx, cc)
	luaFirst := mons.calibrate(t, b.ctx, cc, b.prefix)

	// A script that touches a key it was not given, in the same slot: the
	// audit must catch it although Redis runs it without complaint.
	const bad = "redis.call('SET', KEYS[1], '1'); redis.call('SET', KEYS[1] .. ':undeclared', '1'); return 1"
	require.NoError(t, cc.Eval(b.ctx, bad, []string{b.prefix + ":{audit}:declared"}).Err())
	badSHA := sha1Hex(bad)

	exerciseScripts(t, b)

	calls := mons.stop(t, b.ctx, cc, luaFirst)
	auditor := &keyAuditor{node: masterClient(t, b.ctx, cc), slots: map[string]int64{}}
	ran := map[string]int{}
	var sawBad bool
	for _, c := range calls {
		if !c.mentions(b.prefix) || c.sha == sha1Hex(probeScript) {
			continue // another test's call, or the calibration's
		}
		name, ok := scripts[c.sha]
		if c.sha == badSHA {
			problems := auditor.check(t, b.ctx, c)
			require.NotEmpty(t, problems, "the audit missed a script touching an undeclared key")
			require.Contains(t, strings.Join(problems, "\n"), ":{audit}:declared:undeclared")
			sawBad = true
			continue
		}
		require.True(t, ok, "a call with this test's keys ran a script that is not in internal/lua/scripts/: %s", c)
		if len(c.inner) == 0 {
			// An EVALSHA refused with NOSCRIPT, after another test's
			// SCRIPT FLUSH, ran nothing; its retry as EVAL is audited. A
			// script whose calls all show nothing is caught below as not run.
			continue
		}
		ran[name]++
		for _, p := range auditor.check(t, b.ctx, c) {
			t.Errorf("KEY AUDIT: script %s: %s\n  call: %s", name, p, c)
		}
	}
	require.True(t, sawBad, "the audit's own check did not run")
	for _, name := range scripts {
		if ran[name] == 0 {
			t.Errorf("KEY AUDIT: script %s.lua was never run by the audit's workload: add a step to exerciseScripts that runs it", name)
		}
	}
	t.Logf("audited script calls: %v", ran)
}

// exerciseScripts drives the engine and a worker so that every script runs
// at least once on the cluster.
func exerciseScripts(t *testing.T, b bundle) {
	ctx, e := b.ctx, b.engine
	// push, later, migrate, reserve; the first push and later run twice,
	// as when the Redis client retries them, and the second run finds the
	// record of the first.
	twice := []*replayScripts{{sha: runtime.ScriptSHA("push")}, {sha: runtime.ScriptSHA("later")}}
	for _, h := range twice {
		b.rdb.AddHook(h)
	}
	require.NoError(t, e.Push(ctx, env("audit", "app.Job", "1")))
	require.NoError(t, e.Later(ctx, env("audit", "app.Job", "2"), time.Millisecond))
	for _, h := range twice {
		require.Equal(t, 1, h.replays())
	}
	require.NoError(t, e.PushBulk(ctx, []runtime.Outgoing{
		{Envelope: env("audit", "app.Job", "3")}, {Envelope: env("audit-b", "app.Job", "4")},
	}))
	time.Sleep(5 * time.Millisecond)
	_, err := e.Migrate(ctx, "audit")
	require.NoError(t, err)
	_, err = e.Sizes(ctx, "audit")
	require.NoError(t, err)
	// The reserve runs twice, as when the Redis client retries it: the
	// second run hands back what the first took.
	reserveTwice := &replayScripts{sha: runtime.ScriptSHA("reserve")}
	b.rdb.AddHook(reserveTwice)
	jobs := mustReserve(t, b, "audit", 10).Jobs
	require.Len(t, jobs, 3)
	require.Equal(t, 1, reserveTwice.replays())
	// unreserve, and the reserve pipelined behind a doorbell's BLPOP
	require.NoError(t, e.Unreserve(ctx, jobs[0].Ref, jobs[1].Ref, jobs[2].Ref))
	_, batch, ok, err := e.WaitReserve(ctx, []string{"audit"}, 100*time.Millisecond, 10, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	jobs = batch.Jobs
	require.Len(t, jobs, 3)
	// extend, ack, release, fail
	lost, err := e.Extend(ctx, time.Minute, jobs[0].Ref, jobs[1].Ref)
	require.NoError(t, err)
	require.Empty(t, lost)
	require.NoError(t, e.Ack(ctx, jobs[0].Ref))
	require.NoError(t, e.Release(ctx, runtime.ReleaseOpts{Delay: time.Hour, Exception: true}, jobs[1].Ref))
	require.NoError(t, e.Fail(ctx, runtime.Failure{Ref: jobs[2].Ref, Err: errors.New("audit")}))
	// retry, forget, prune
	fs := b.engine.Failed()
	retried, err := fs.Retry(ctx, "audit", jobs[2].ID)
	require.NoError(t, err)
	require.Equal(t, []string{jobs[2].ID}, retried)
	again := mustReserve(t, b, "audit", 1).Jobs
	require.Len(t, again, 1)
	require.NoError(t, e.Fail(ctx, runtime.Failure{Ref: again[0].Ref, Err: errors.New("audit")}))
	_, err = fs.Forget(ctx, "audit", again[0].ID)
	require.NoError(t, err)
	_, err = fs.Prune(ctx, "audit", time.Hour)
	require.NoError(t, err)
	// clear
	_, err = e.Clear(ctx, "audit-b")
	require.NoError(t, err)
	// failed_record: a job that failed outside the engine's queues.
	rec := env("audit", "app.Job", "recorded")
	rec.ID = runtime.NewID()
	recorded, err := fs.Record(ctx, rec, errors.New("audit"), 1)
	require.NoError(t, err)
	require.True(t, recorded)
	// hooks_due and hooks_claim: a failing job's hooks recorded as due,
	// then claimed by a sweep.
	require.NoError(t, e.HooksDue(ctx, runtime.Ref{Queue: "audit", ID: "hooked", Token: "tok"}))
	claimed, err := e.ClaimHooks(ctx, "audit", 0)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	// schedule_tick: a tick pushed with an entry's lock, one delayed, and
	// a tick skipped as the lock is still held.
	sched := runtime.NewSchedule()
	sched.Job(onQueue(1, "audit-sched")).Name("audit-lock").WithoutOverlapping()
	sched.Job(onQueue(2, "audit-sched")).Name("audit-delay").Delay(time.Minute)
	clock := schedule.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, want := range []runtime.TickOutcome{runtime.TickDispatched, runtime.TickOverlapping} {
		reports, err := sched.RunDue(ctx, e, runtime.ScheduleConfig{Clock: clock})
		require.NoError(t, err)
		require.Equal(t, want, reports[0].Outcome)
		now, _ := clock.Now(ctx)
		clock.Set(now.Add(time.Minute))
	}

	// A worker running a chain whose next link goes to another queue (and
	// slot): whatever scripts the worker uses for that run too.
	r := runtime.NewRouter()
	var mu sync.Mutex
	var seen []int
	runtime.Register(r, "test.Job", func(ctx context.Context, j testJob) error {
		mu.Lock()
		seen = append(seen, j.N)
		mu.Unlock()
		if j.Tag == "fail" {
			return runtime.FailJob(errors.New("audit"))
		}
		if info, _ := runtime.JobInfoFrom(ctx); j.Tag == "flaky" && info.Attempt == 1 {
			return errors.New("flaky")
		}
		return nil
	})
	wctx := runtime.WithDispatcher(ctx, e)
	_, err = runtime.NewPendingDispatch(onQueue(1, "audit-chain")).WithChain(onQueue(2, "audit-next")).Dispatch(wctx)
	require.NoError(t, err)
	// A chain whose next link has a delay: it goes to the delayed set.
	_, err = runtime.NewPendingDispatch(onQueue(7, "audit-chain")).
		WithChain(runtime.NewPendingDispatch(onQueue(8, "audit-next")).Delay(20 * time.Millisecond)).Dispatch(wctx)
	require.NoError(t, err)
	// A unique job: its lock is taken at dispatch and released when it
	// succeeds.
	_, err = runtime.Dispatch(wctx, job(3, runtime.JobOptions{Queue: "audit-chain", UniqueFor: time.Minute}))
	require.NoError(t, err)
	// A batch, created and added to, with a job that succeeds and one that
	// fails, whose callbacks run and are marked as run; and a batch that
	// is cancelled.
	cb := runtime.NewCallback("audit.batch", func(ctx context.Context, kind string, o runtime.Outcome) error { return nil })
	runtime.RegisterCallback(r, cb)
	bid, err := runtime.NewBatch(onQueue(4, "audit-batch")).AllowFailures().
		Catch(cb.With("catch")).Finally(cb.With("finally")).Dispatch(wctx)
	require.NoError(t, err)
	require.NoError(t, e.Batches().Add(ctx, bid, tagged(5, "fail", runtime.JobOptions{Queue: "audit-batch"})))
	other, err := runtime.NewBatch().Dispatch(wctx)
	require.NoError(t, err)
	require.NoError(t, e.Batches().Cancel(ctx, other))
	// Job middleware: every job is rate limited, and the flaky job's
	// error is counted by the exception throttle.
	_, err = runtime.Dispatch(wctx, tagged(6, "flaky", runtime.JobOptions{Queue: "audit-chain"}))
	require.NoError(t, err)
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{
		Queues: []string{"audit-chain", "audit-next", "audit-batch"}, Logger: quiet, Sleep: 20 * time.Millisecond, Tries: 2,
		Middleware: []runtime.Middleware{runtime.RateLimited("audit", 1000, time.Second), runtime.ThrottlesExceptions(100, time.Minute)},
	})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(wctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 9
	}, "the worker runs the chains, the unique job, the batch and the flaky job twice")
	cancel()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	require.ElementsMatch(t, []int{1, 2, 3, 4, 5, 6, 6, 7, 8}, seen)
}

// luaScripts maps the SHA1 of each script to its name.
func luaScripts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range lua.All() {
		out[s.SHA] = s.Name
	}
	require.NotEmpty(t, out)
	return out
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// monitorEntry is one line of MONITOR output.
type monitorEntry struct {
	lua  bool // run by a script
	args []string
}

// scriptCall is one EVAL or EVALSHA and the commands its script ran.
type scriptCall struct {
	node  string
	sha   string
	keys  []string
	inner [][]string
}

func (c scriptCall) mentions(prefix string) bool {
	for _, k := range c.keys {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	for _, cmd := range c.inner {
		for _, a := range cmd[1:] {
			if strings.HasPrefix(a, prefix) {
				return true
			}
		}
	}
	return false
}

func (c scriptCall) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "on %s, KEYS %q", c.node, c.keys)
	for _, cmd := range c.inner {
		fmt.Fprintf(&b, "\n    %s", shorten(cmd))
	}
	return b.String()
}

func shorten(cmd []string) string {
	out := make([]string, len(cmd))
	for i, a := range cmd {
		if len(a) > 60 {
			a = a[:60] + "..."
		}
		out[i] = strconv.Quote(a)
	}
	return strings.Join(out, " ")
}

// monitors holds one MONITOR connection per master.
type monitors struct {
	byAddr map[string]*monitor
}

type monitor struct {
	addr    string
	conn    net.Conn
	mu      sync.Mutex
	entries []monitorEntry
	done    chan struct{}
}

func startMonitors(t *testing.T, ctx context.Context, cc *redis.ClusterClient) *monitors {
	t.Helper()
	ms := &monitors{byAddr: map[string]*monitor{}}
	var mu sync.Mutex
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		addr := node.Options().Addr
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		r := bufio.NewReaderSize(conn, 1<<16)
		if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "+OK" {
			return fmt.Errorf("MONITOR on %s: %q %v", addr, line, err)
		}
		m := &monitor{addr: addr, conn: conn, done: make(chan struct{})}
		go m.read(r)
		mu.Lock()
		ms.byAddr[addr] = m
		mu.Unlock()
		return nil
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, m := range ms.byAddr {
			_ = m.conn.Close()
		}
	})
	return ms
}

func (m *monitor) read(r *bufio.Reader) {
	defer close(m.done)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		e, ok := parseMonitorLine(strings.TrimRight(line, "\r\n"))
		if !ok {
			continue
		}
		m.mu.Lock()
		m.entries = append(m.entries, e)
		m.mu.Unlock()
	}
}

// waitFor waits until the monitor has seen an ECHO of marker.
func (m *monitor) waitFor(t *testing.T, marker string) {
	t.Helper()
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i := len(m.entries) - 1; i >= 0; i-- {
			e := m.entries[i]
			if len(e.args) == 2 && strings.EqualFold(e.args[0], "echo") && e.args[1] == marker {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "MONITOR on %s did not see the marker", m.addr)
}

const probeScript = "return redis.call('EXISTS', KEYS[1])"

// calibrate finds out whether MONITOR shows a script's commands before
// or after the EVAL that ran them (Redis has done both).
func (ms *monitors) calibrate(t *testing.T, ctx context.Context, cc *redis.ClusterClient, prefix string) (luaFirst bool) {
	t.Helper()
	key := prefix + ":{audit}:probe"
	require.NoError(t, cc.Eval(ctx, probeScript, []string{key}).Err())
	node, err := cc.MasterForKey(ctx, key)
	require.NoError(t, err)
	m := ms.byAddr[node.Options().Addr]
	require.NotNil(t, m)
	marker := prefix + ":calibrated"
	require.NoError(t, node.Echo(ctx, marker).Err())
	m.waitFor(t, marker)
	m.mu.Lock()
	defer m.mu.Unlock()
	evalAt, luaAt := -1, -1
	for i, e := range m.entries {
		switch {
		case !e.lua && strings.EqualFold(e.args[0], "eval") && slices.Contains(e.args, key):
			evalAt = i
		case e.lua && strings.EqualFold(e.args[0], "exists") && slices.Contains(e.args, key):
			luaAt = i
		}
	}
	require.True(t, evalAt >= 0 && luaAt >= 0, "MONITOR did not show the probe script and its command")
	return luaAt < evalAt
}

// stop waits until every monitor has caught up, closes them and returns
// the script calls they saw.
func (ms *monitors) stop(t *testing.T, ctx context.Context, cc *redis.ClusterClient, luaFirst bool) []scriptCall {
	t.Helper()
	marker := fmt.Sprintf("audit-done-%d", time.Now().UnixNano())
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		return node.Echo(ctx, marker).Err()
	})
	require.NoError(t, err)
	var calls []scriptCall
	for addr, m := range ms.byAddr {
		m.waitFor(t, marker)
		_ = m.conn.Close()
		<-m.done
		calls = append(calls, groupScriptCalls(t, addr, m.entries, luaFirst)...)
	}
	return calls
}

// groupScriptCalls pairs each EVAL/EVALSHA with the commands its script
// ran. A script runs atomically, so its commands sit next to its call.
func groupScriptCalls(t *testing.T, addr string, entries []monitorEntry, luaFirst bool) []scriptCall {
	var calls []scriptCall
	var pending [][]string
	var open *scriptCall
	for _, e := range entries {
		if e.lua {
			if luaFirst {
				pending = append(pending, e.args)
			} else if open != nil {
				open.inner = append(open.inner, e.args)
			}
			continue
		}
		if open != nil {
			calls = append(calls, *open)
			open = nil
		}
		c, ok := parseScriptCall(t, addr, e.args)
		if !ok {
			pending = nil
			continue
		}
		if luaFirst {
			c.inner, pending = pending, nil
			calls = append(calls, c)
		} else {
			open = &c
		}
	}
	if open != nil {
		calls = append(calls, *open)
	}
	return calls
}

func parseScriptCall(t *testing.T, addr string, args []string) (scriptCall, bool) {
	var sha string
	switch strings.ToLower(args[0]) {
	case "evalsha", "evalsha_ro":
		sha = strings.ToLower(args[1])
	case "eval", "eval_ro":
		sha = sha1Hex(args[1])
	default:
		return scriptCall{}, false
	}
	n, err := strconv.Atoi(args[2])
	require.NoError(t, err, "numkeys of %v", args[:3])
	return scriptCall{node: addr, sha: sha, keys: args[3 : 3+n]}, true
}

// parseMonitorLine reads `1700000000.123456 [0 127.0.0.1:5000] "CMD" "arg"`
// (or `[0 lua]` for a script's commands); the arguments are quoted with
// Redis's escapes.
func parseMonitorLine(line string) (monitorEntry, bool) {
	line = strings.TrimPrefix(line, "+")
	open := strings.IndexByte(line, '[')
	closing := strings.IndexByte(line, ']')
	if open < 0 || closing < open {
		return monitorEntry{}, false
	}
	src := line[open+1 : closing]
	e := monitorEntry{lua: strings.HasSuffix(src, " lua")}
	s := line[closing+1:]
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		arg, rest, ok := unquoteRedis(s[i+1:])
		if !ok {
			return monitorEntry{}, false
		}
		e.args = append(e.args, arg)
		s = rest
	}
	return e, len(e.args) > 0
}

// unquoteRedis reads one argument up to its closing quote.
func unquoteRedis(s string) (arg, rest string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), s[i+1:], true
		case c != '\\':
			b.WriteByte(c)
		case i+1 >= len(s):
			return "", "", false
		default:
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				if i+2 >= len(s) {
					return "", "", false
				}
				v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
				if err != nil {
					return "", "", false
				}
				b.WriteByte(byte(v))
				i += 2
			default:
				b.WriteByte(s[i])
			}
		}
	}
	return "", "", false
}

// keyAuditor checks script calls with COMMAND GETKEYS and CLUSTER KEYSLOT.
type keyAuditor struct {
	node  *redis.Client
	slots map[string]int64
}

func masterClient(t *testing.T, ctx context.Context, cc *redis.ClusterClient) *redis.Client {
	t.Helper()
	var one *redis.Client
	var mu sync.Mutex
	require.NoError(t, cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		mu.Lock()
		if one == nil {
			one = node
		}
		mu.Unlock()
		return nil
	}))
	return one
}

func (a *keyAuditor) slot(t *testing.T, ctx context.Context, key string) int64 {
	if s, ok := a.slots[key]; ok {
		return s
	}
	s, err := a.node.ClusterKeySlot(ctx, key).Result()
	require.NoError(t, err)
	a.slots[key] = s
	return s
}

// commandKeys returns the keys a command touches, by the server's own
// key specs.
func (a *keyAuditor) commandKeys(t *testing.T, ctx context.Context, cmd []string) []string {
	if len(cmd) == 1 {
		return nil // TIME and the like; COMMAND GETKEYS needs an argument
	}
	args := make([]any, 0, len(cmd)+2)
	args = append(args, "COMMAND", "GETKEYS")
	for _, c := range cmd {
		args = append(args, c)
	}
	keys, err := a.node.Do(ctx, args...).StringSlice()
	if err != nil && strings.Contains(err.Error(), "no key arguments") {
		return nil
	}
	require.NoError(t, err, "COMMAND GETKEYS %s", shorten(cmd))
	return keys
}

// check returns what is wrong with one call: keys touched but not
// declared, and keys outside the call's slot.
func (a *keyAuditor) check(t *testing.T, ctx context.Context, c scriptCall) []string {
	var problems []string
	if len(c.keys) == 0 {
		return []string{"no KEYS declared"}
	}
	want := a.slot(t, ctx, c.keys[0])
	for _, k := range c.keys {
		if s := a.slot(t, ctx, k); s != want {
			problems = append(problems, fmt.Sprintf("KEYS %q is in slot %d, not %d like %q", k, s, want, c.keys[0]))
		}
	}
	for _, cmd := range c.inner {
		for _, k := range a.commandKeys(t, ctx, cmd) {
			if !slices.Contains(c.keys, k) {
				problems = append(problems, fmt.Sprintf("%s touches %q, which is not in KEYS", strings.ToUpper(cmd[0]), k))
			}
			if s := a.slot(t, ctx, k); s != want {
				problems = append(problems, fmt.Sprintf("%s touches %q in slot %d, not %d", strings.ToUpper(cmd[0]), k, s, want))
			}
		}
	}
	return problems
}
