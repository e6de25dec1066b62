package runtime_test

import (
	"bufio"
	"context"
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
)

// The MONITOR side of TestScriptKeyAudit: reading what each master ran,
// pairing script calls with the commands their scripts ran, and checking
// their keys.

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
