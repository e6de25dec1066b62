package console_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// greet is a job that succeeds; boom is one that always fails.
type greet struct{ Name string }

func (greet) JobName() string                { return "test.Greet" }
func (greet) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j greet) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type boom struct{ N int }

func (boom) JobName() string                { return "test.Boom" }
func (boom) JobOptions() runtime.JobOptions { return runtime.JobOptions{Tries: 2} }
func (j boom) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// testBundle is a Redis backend with a key prefix of its own, an engine
// on it, and a way to run commands against it in-process.
type testBundle struct {
	ctx     context.Context
	backend string
	url     string
	prefix  string
	engine  *runtime.Engine
	router  *runtime.Router
	env     map[string]string
	// schedule, if set, is given to the commands (console.WithSchedule).
	schedule *schedule.Schedule
	// outbox and outboxTable, if set, are given to the commands
	// (console.WithOutbox, EngineConfig.OutboxTable).
	outbox      *console.Outbox
	outboxTable string
	// failedStore, if set, is the commands' EngineConfig.FailedStore.
	failedStore runtime.FailedBackend
}

// forEachBackend runs fn, in parallel, on a real Redis and an embedded
// one (and a cluster when the test environment has one).
func forEachBackend(t *testing.T, fn func(t *testing.T, b *testBundle)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, be))
		})
	}
}

// orderFailed is a callback the test program defines, as an application
// does, in a package variable: queue:work refuses a router without it.
var orderFailed = runtime.NewCallback("test.orderFailed", func(context.Context, string, runtime.Outcome) error { return nil })

func setup(t *testing.T, be redistest.Backend) *testBundle {
	t.Helper()
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	// The bundle's engine keeps an embedded server alive for the
	// commands, which open it by the same name.
	e, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	r := runtime.NewRouter()
	runtime.Register(r, "test.Greet", func(ctx context.Context, j greet) error { return nil })
	runtime.Register(r, "test.Boom", func(ctx context.Context, j boom) error { return fmt.Errorf("boom %d", j.N) })
	runtime.RegisterCallback(r, orderFailed)
	return &testBundle{ctx: ctx, backend: be.Name, url: be.URL, prefix: prefix, engine: e, router: r, env: map[string]string{}}
}

// run runs a command with the bundle's Redis and prefix, and returns its
// exit status and output.
func (b *testBundle) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return b.runRaw(t, append(args, "--redis", b.url, "--prefix", b.prefix)...)
}

// runRaw runs a command with args as given.
func (b *testBundle) runRaw(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &console.Command{
		Name:   "app",
		Router: b.router,
		Stdout: &out,
		Stderr: &errOut,
		Getenv: func(k string) string { return b.env[k] },
		Worker: runtime.WorkerConfig{Sleep: 20 * time.Millisecond},
	}
	if b.schedule != nil {
		console.WithSchedule(b.schedule)(c)
	}
	if b.outbox != nil {
		console.WithOutbox(*b.outbox)(c)
		c.Engine.OutboxTable = b.outboxTable
	}
	c.Engine.FailedStore = b.failedStore
	code = c.Run(b.ctx, args)
	return code, out.String(), errOut.String()
}

// ok runs a command that must succeed and returns its stdout.
func (b *testBundle) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := b.run(t, args...)
	require.Equal(t, 0, code, "%v: stderr:\n%s", args, stderr)
	return stdout
}

// push dispatches jobs to queue.
func (b *testBundle) push(t *testing.T, queue string, jobs ...runtime.Job) []string {
	t.Helper()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		id, err := b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(j).OnQueue(queue))
		require.NoError(t, err)
		ids[i] = id
	}
	return ids
}

// failed puts n failed jobs in queue's failed store and returns their
// IDs, oldest first.
func (b *testBundle) failed(t *testing.T, queue string, n int) []string {
	t.Helper()
	var ids []string
	for n > 0 {
		k := min(n, 1000)
		out := make([]runtime.Outgoing, k)
		for i := range out {
			out[i] = runtime.Outgoing{Envelope: &runtime.Envelope{Name: "test.Boom", Queue: queue, Body: []byte{0x80}}}
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, k, time.Minute)
		require.NoError(t, err)
		require.Len(t, batch.Jobs, k)
		fs := make([]runtime.Failure, k)
		for i, r := range batch.Jobs {
			fs[i] = runtime.Failure{Ref: r.Ref, Name: "test.Boom", Err: fmt.Errorf("boom %d", len(ids)+i), Attempts: r.Attempts}
			ids = append(ids, r.ID)
		}
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, fs...))
		n -= k
	}
	return ids
}

func (b *testBundle) sizes(t *testing.T, queue string) runtime.Sizes {
	t.Helper()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	return s
}

// oneLine checks that s is a single line and returns it without its
// newline.
func oneLine(t *testing.T, s string) string {
	t.Helper()
	require.True(t, strings.HasSuffix(s, "\n"), "%q does not end in a newline", s)
	require.Equal(t, 1, strings.Count(s, "\n"), "not one line: %q", s)
	return strings.TrimSuffix(s, "\n")
}

// rows returns the lines of a table as fields, header first.
func rows(s string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.Fields(line))
	}
	return out
}
