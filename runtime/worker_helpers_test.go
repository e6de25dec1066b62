package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// testJob is a hand-written runtime.Job, as generated code would write it.
type testJob struct {
	N    int
	Tag  string
	opts runtime.JobOptions
}

func (j testJob) JobName() string                { return "test.Job" }
func (j testJob) JobOptions() runtime.JobOptions { return j.opts }
func (j testJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }
func job(n int, opts runtime.JobOptions) testJob { return testJob{N: n, opts: opts} }
func onQueue(n int, queue string) testJob {
	return testJob{N: n, opts: runtime.JobOptions{Queue: queue}}
}
func tagged(n int, tag string, o runtime.JobOptions) testJob { return testJob{N: n, Tag: tag, opts: o} }

// eventLog records events.
type eventLog struct {
	mu     sync.Mutex
	events []runtime.Event
}

func (l *eventLog) add(e runtime.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// kinds lists the kinds of the events of job id, or of all jobs if id is
// "", leaving out Looping.
func (l *eventLog) kinds(id string) []runtime.EventKind {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runtime.EventKind
	for _, e := range l.events {
		if e.Kind != runtime.Looping && (id == "" || e.ID == id) {
			out = append(out, e.Kind)
		}
	}
	return out
}

func (l *eventLog) of(kind runtime.EventKind) []runtime.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runtime.Event
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// wbundle is what a worker test needs.
type wbundle struct {
	bundle
	router *runtime.Router
	log    *eventLog
}

func forEachWorkerBackend(t *testing.T, fn func(t *testing.T, b wbundle)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be, runtime.EngineConfig{})
			wb := wbundle{bundle: b, router: runtime.NewRouter(), log: &eventLog{}}
			wb.ctx = runtime.WithDispatcher(b.ctx, b.engine)
			b.engine.Subscribe(wb.log.add)
			fn(t, wb)
		})
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// worker builds a worker with test-friendly defaults under cfg.
func (b wbundle) worker(t *testing.T, cfg runtime.WorkerConfig) *runtime.Worker {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if cfg.Sleep == 0 {
		cfg.Sleep = 50 * time.Millisecond
	}
	w, err := runtime.NewWorker(b.engine, b.router, cfg)
	require.NoError(t, err)
	w.Subscribe(b.log.add)
	return w
}

// runToEnd runs a worker until it stops by itself, at most two minutes:
// a bound on a hang, not a speed target (the wide workflows drain in
// about 20 seconds on embedded under -race on a loaded machine).
func (b wbundle) runToEnd(t *testing.T, cfg runtime.WorkerConfig) *runtime.Worker {
	t.Helper()
	w := b.worker(t, cfg)
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, w.Run(ctx))
	require.NoError(t, ctx.Err(), "worker did not stop by itself; reason %q", w.StopReason())
	return w
}

// start runs a worker in the background; the returned func stops it and
// waits.
func (b wbundle) start(t *testing.T, cfg runtime.WorkerConfig) (*runtime.Worker, func()) {
	t.Helper()
	w := b.worker(t, cfg)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(20 * time.Second):
				t.Error("worker did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return w, stop
}

func (b wbundle) dispatch(t *testing.T, jobs ...runtime.Job) []string {
	t.Helper()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		id, err := runtime.Dispatch(b.ctx, j)
		require.NoError(t, err)
		ids[i] = id
	}
	return ids
}

func (b wbundle) failed(t *testing.T, queue string) []runtime.FailedJob {
	t.Helper()
	fs, err := runtime.NewInspector(b.engine).Failed().List(b.ctx, queue, 0, 100)
	require.NoError(t, err)
	slices.Reverse(fs)
	return fs
}

// recorder records what handlers saw.
type recorder struct {
	mu   sync.Mutex
	seen []string
	at   []time.Time
	info []runtime.JobInfo
}

func (r *recorder) add(ctx context.Context, s string) {
	info, _ := runtime.JobInfoFrom(ctx)
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.at = append(r.at, time.Now())
	r.info = append(r.info, info)
	r.mu.Unlock()
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func (r *recorder) infos() []runtime.JobInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.info)
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, msg)
}
