// Package faultworker is the worker process of the fault suite: the test
// binary re-executes itself in this mode, so that a test can signal,
// stop and kill a real worker process.
//
// Every handler run is written to the worker's ledger, a file opened
// with O_APPEND, one line per event, each line one write(2): what a
// worker wrote before it was killed with SIGKILL is in the file.
package faultworker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	goruntime "runtime"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// ConfigEnv holds the JSON-encoded Config of a child worker.
const ConfigEnv = "JOBGEN_FAULTS_WORKER"

// TaskName is the wire name of Task.
const TaskName = "faults.Task"

// CallbackName is the name of the callback every worker registers: it
// writes a C line with its argument, a label, to the ledger.
const CallbackName = "faults.Callback"

// Callback returns a reference to the workers' callback with label, one
// word, for a chain's catch or a batch's then, catch or finally: each run
// of it is a C line in the ledger of the worker that ran it.
func Callback(label string) runtime.CallbackRef {
	return runtime.NewCallback[string](CallbackName, nil).With(label)
}

// Task kinds: what a handler run of a Task does.
const (
	KindOK    = ""      // succeed
	KindPanic = "panic" // panic
	KindExit  = "exit"  // exit the worker process with status 3
	KindError = "error" // return an error (an exception: retried)
	KindFail  = "fail"  // return runtime.FailRequest: fail now
	// KindHold returns runtime.HoldQueue until HoldUntil, then succeeds.
	KindHold = "hold"
)

// Task is the job every fault test dispatches.
type Task struct {
	// Seq is the job's sequence number in its test.
	Seq int
	// Kind says what the handler does after Millis.
	Kind string
	// Until, if positive, limits Kind to attempts up to Until; later
	// attempts succeed.
	Until int
	// Millis is how long a run sleeps (or waits for its context to end,
	// which ends the run with the context's cause) before it does Kind.
	Millis int
	// IgnoreContext makes the run sleep all of Millis without watching
	// its context, as a handler that does not honour cancellation does.
	IgnoreContext bool `msgpack:",omitempty"`
	// FirstMillis, if positive, is how long the first attempt sleeps in
	// place of Millis.
	FirstMillis int `msgpack:",omitempty"`
	// HoldUntil is, for KindHold, the Unix ms until which a run holds
	// the queue (runtime.HoldQueue for the time left).
	HoldUntil int64 `msgpack:",omitempty"`
	// Trace writes B and E lines, to the nanosecond, as the run begins
	// and just before it returns, for tests that measure how many runs
	// overlap.
	Trace bool `msgpack:",omitempty"`
	// Pad makes the job bigger.
	Pad []byte `msgpack:",omitempty"`
	// Opts are the options it is dispatched with; not encoded.
	Opts runtime.JobOptions `msgpack:"-"`
}

// JobName implements runtime.Job.
func (Task) JobName() string { return TaskName }

// JobOptions implements runtime.Job.
func (t Task) JobOptions() runtime.JobOptions { return t.Opts }

// EncodeJob implements runtime.Job.
func (t Task) EncodeJob() ([]byte, error) { return runtime.Encode(t) }

// Config configures a child worker.
type Config struct {
	// Name of the worker, for its logs.
	Name string
	// URL of the Redis to use.
	URL string
	// Prefix of the engine's keys.
	Prefix string
	// Queues to work, in priority order.
	Queues []string
	// Worker settings, as in runtime.WorkerConfig.
	Concurrency int
	Prefetch    int
	Tries       int
	RetryAfter  time.Duration
	Timeout     time.Duration
	Grace       time.Duration
	Sleep       time.Duration
	// AllowEviction is runtime.EngineConfig.AllowEviction.
	AllowEviction bool
	// Ledger is the path of the worker's ledger.
	Ledger string
	// Log is the path of the worker's JSON log.
	Log string
	// Stats, if positive, writes an M line with the heap and goroutine
	// count to the ledger this often.
	Stats time.Duration
	// Skew shifts the worker's clock (WorkerConfig.Clock).
	Skew time.Duration
	// Schedule, if set, makes the process a schedule process rather than
	// a worker (see runSchedule): one entry per spec, named e0, e1, ...,
	// dispatching a Task whose Seq is its index to the first of Queues.
	Schedule []string
	// CatchUp is the entries' schedule.Entry.CatchUp.
	CatchUp int
}

// Child reports whether this process was started as a child worker.
func Child() bool { return os.Getenv(ConfigEnv) != "" }

// Main runs the child worker until it is signalled, and returns the exit
// status.
func Main() int {
	var cfg Config
	if err := json.Unmarshal([]byte(os.Getenv(ConfigEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "faultworker: bad config:", err)
		return 2
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "faultworker:", err)
		return 1
	}
	return 0
}

func run(cfg Config) error {
	ctx := context.Background()
	ledger, err := OpenLedger(cfg.Ledger)
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(cfg.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))

	e, err := runtime.Open(ctx, cfg.URL, runtime.EngineConfig{Prefix: cfg.Prefix, AllowEviction: cfg.AllowEviction})
	if err != nil {
		return err
	}
	defer e.Close()
	if len(cfg.Schedule) > 0 {
		return runSchedule(ctx, cfg, e, ledger, log)
	}
	r := runtime.NewRouter()
	runtime.Register(r, TaskName, func(ctx context.Context, t Task) error { return handle(ctx, ledger, t) })
	registerWorkflow(r, ledger)
	runtime.RegisterCallback(r, runtime.NewCallback(CallbackName, func(ctx context.Context, label string, o runtime.Outcome) error {
		ledger.Callback(label, o.JobID)
		return nil
	}))
	wc := runtime.WorkerConfig{
		Name: cfg.Name, Queues: cfg.Queues, Concurrency: cfg.Concurrency, Prefetch: cfg.Prefetch, Tries: cfg.Tries,
		RetryAfter: cfg.RetryAfter, Timeout: cfg.Timeout, Grace: cfg.Grace, Sleep: cfg.Sleep,
		Logger: log,
	}
	if cfg.Skew != 0 {
		wc.Clock = skewed(cfg.Skew)
	}
	w, err := runtime.NewWorker(e, r, wc)
	if err != nil {
		return err
	}
	if cfg.Stats > 0 {
		go stats(ledger, cfg.Stats)
	}
	ledger.Ready()
	if err := w.RunWithSignals(ctx); err != nil {
		return err
	}
	ledger.Exit(w.StopReason())
	return nil
}

// runSchedule runs the schedule of cfg until SIGTERM or SIGINT, as
// schedule:work does, on the Redis clock.
func runSchedule(ctx context.Context, cfg Config, e *runtime.Engine, l *Ledger, log *slog.Logger) error {
	s := ScheduleOf(cfg.Schedule, cfg.Queues[0], cfg.CatchUp)
	if _, err := s.Entries(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	l.Ready()
	if err := s.Run(ctx, e, schedule.Config{Logger: log}); err != nil {
		return err
	}
	l.Exit("signal")
	return nil
}

// ScheduleOf is the schedule a schedule process runs: entry i, named
// "e<i>", dispatches Task{Seq: i} to queue at the ticks of specs[i].
func ScheduleOf(specs []string, queue string, catchUp int) *schedule.Schedule {
	s := schedule.New()
	for i, spec := range specs {
		s.Cron(spec, Task{Seq: i, Opts: runtime.JobOptions{Queue: queue}}).Name(fmt.Sprintf("e%d", i)).CatchUp(catchUp)
	}
	return s
}

func handle(ctx context.Context, l *Ledger, t Task) error {
	info, _ := runtime.JobInfoFrom(ctx)
	if t.Trace {
		l.Begin(info.ID)
		defer l.End(info.ID)
	}
	l.Start(info.ID, t.Seq, info.Attempt)
	millis := t.Millis
	if t.FirstMillis > 0 && info.Attempt == 1 {
		millis = t.FirstMillis
	}
	switch {
	case millis > 0 && t.IgnoreContext:
		time.Sleep(time.Duration(millis) * time.Millisecond)
	case millis > 0:
		timer := time.NewTimer(time.Duration(millis) * time.Millisecond)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	kind := t.Kind
	if t.Until > 0 && info.Attempt > t.Until {
		kind = KindOK
	}
	switch kind {
	case KindPanic:
		panic(fmt.Sprintf("faults: poison job %d", t.Seq))
	case KindExit:
		os.Exit(3)
	case KindError:
		return fmt.Errorf("faults: failing job %d", t.Seq)
	case KindFail:
		return runtime.FailRequest(fmt.Errorf("faults: job %d fails itself", t.Seq))
	case KindHold:
		if left := time.Until(time.UnixMilli(t.HoldUntil)); left > 0 {
			return runtime.HoldQueue(left, fmt.Errorf("faults: job %d meets a 429", t.Seq))
		}
	}
	l.Finish(info.ID, t.Seq, info.Attempt)
	return nil
}

func stats(l *Ledger, every time.Duration) {
	for range time.Tick(every) {
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		l.Stats(ms.HeapAlloc, goruntime.NumGoroutine())
	}
}

// skewed returns a clock skew ahead of this process's.
func skewed(skew time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(skew) }
}
