// Package workermain is the worker process of the rolling deploy fault
// test: ../v1/worker and ../v2/worker build it, each with its own
// version of the job's package, into two binaries that the test runs
// side by side.
//
// Each handler run appends one line to the worker's ledger, in one
// write(2): "R <job ID> <seq> <value> <attempt> <version>", value being
// the renamed field as the handler saw it. At exit the worker appends
// "S <given back for a newer worker> <returned at the stop>".
package workermain

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// ConfigEnv holds the JSON-encoded Config of a worker process.
const ConfigEnv = "JOBGEN_ROLLING_WORKER"

// Config is what a worker process runs with.
type Config struct {
	URL, Prefix, Queue, Name string
	Ledger, Log              string
	Concurrency              int
}

// Ledger records handler runs.
type Ledger struct {
	mu      sync.Mutex
	f       *os.File
	version int
}

// Run records one handler run of the job with seq and value.
func (l *Ledger) Run(ctx context.Context, seq int64, value string) error {
	info, _ := runtime.JobInfoFrom(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintf(l.f, "R %s %d %s %d %d\n", info.ID, seq, value, info.Attempt, l.version)
	return err
}

// Main runs the worker of version, its jobs registered by register,
// until SIGTERM, and returns the exit code.
func Main(version int, register func(r *runtime.Router, l *Ledger)) int {
	if err := run(version, register); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

func run(version int, register func(r *runtime.Router, l *Ledger)) error {
	var cfg Config
	if err := json.Unmarshal([]byte(os.Getenv(ConfigEnv)), &cfg); err != nil {
		return fmt.Errorf("%s: %w", ConfigEnv, err)
	}
	f, err := os.OpenFile(cfg.Ledger, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	logFile, err := os.OpenFile(cfg.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctx := context.Background()
	e, err := runtime.Open(ctx, cfg.URL, runtime.EngineConfig{Prefix: cfg.Prefix})
	if err != nil {
		return err
	}
	defer e.Close()
	l := &Ledger{f: f, version: version}
	r := runtime.NewRouter()
	register(r, l)
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{
		Name: cfg.Name, Queues: []string{cfg.Queue}, Concurrency: cfg.Concurrency,
		Sleep: 50 * time.Millisecond, Grace: 20 * time.Second, Timeout: 30 * time.Second, RetryAfter: 90 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfg.Ledger+".ready", nil, 0o644); err != nil {
		return err
	}
	err = w.RunWithSignals(ctx)
	s := w.Stats()
	l.mu.Lock()
	fmt.Fprintf(f, "S %d %d\n", s.GivenBackNewer, s.Returned)
	l.mu.Unlock()
	return err
}
