package jobtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/jobgen/jobgen/runtime"
)

// HarnessConfig configures a Harness. The zero value is usable.
type HarnessConfig struct {
	// Engine configures the harness's engine; its Prefix defaults to
	// "jobtest". Set Keys here to run encrypted jobs.
	Engine runtime.EngineConfig
	// Worker configures the workers that Drain runs. Drain sets their
	// Queues (every queue pushed to) and StopWhenEmpty; the Logger
	// defaults to one that discards everything.
	Worker runtime.WorkerConfig
}

// Harness is the real engine and worker, in-process, on an embedded
// Redis of its own, for integration tests.
type Harness struct {
	// Engine is the harness's engine; it is closed when the test ends.
	Engine *runtime.Engine
	// Router is where the test registers its handlers and callbacks.
	Router *runtime.Router
	cfg    HarnessConfig
}

// NewHarness starts an embedded Redis and an engine on it, both closed
// when t ends.
func NewHarness(t testing.TB, cfg HarnessConfig) *Harness {
	t.Helper()
	if cfg.Engine.Prefix == "" {
		cfg.Engine.Prefix = "jobtest"
	}
	if cfg.Worker.Logger == nil {
		cfg.Worker.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	e, err := runtime.Open(context.Background(), "embedded://jobtest-"+hex.EncodeToString(b[:]), cfg.Engine)
	if err != nil {
		t.Fatalf("jobtest: start harness: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return &Harness{Engine: e, Router: runtime.NewRouter(), cfg: cfg}
}

// Context returns ctx with the harness's engine as dispatcher and its
// router for DispatchSync.
func (h *Harness) Context(ctx context.Context) context.Context {
	return runtime.WithRouter(runtime.WithDispatcher(ctx, h.Engine), h.Router)
}

// Drain runs workers over every queue pushed to until no queue has a
// ready job: the jobs that were ready, the delayed jobs and retries that
// are due, the jobs they dispatch, and so on. It returns when that is so,
// or when ctx is done. Jobs delayed past that point stay delayed, and a
// later Drain runs them once they are due; failed jobs are in
// h.Engine.Failed().
func (h *Harness) Drain(ctx context.Context) error {
	_, err := h.drain(h.Context(ctx))
	return err
}

// drain is Drain. It returns what the last look at the queues found
// still pending.
func (h *Harness) drain(ctx context.Context) (pending, error) {
	for {
		p, err := h.pending(ctx)
		if err != nil {
			return p, fmt.Errorf("jobtest: drain: %w", err)
		}
		if p.sizes.Ready == 0 {
			return p, nil
		}
		cfg := h.cfg.Worker
		cfg.Queues, cfg.StopWhenEmpty = p.queues, true
		w, err := runtime.NewWorker(h.Engine, h.Router, cfg)
		if err != nil {
			return p, fmt.Errorf("jobtest: drain: %w", err)
		}
		if err := w.Run(ctx); err != nil {
			return p, fmt.Errorf("jobtest: drain: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return p, err
		}
	}
}

// pending is what is left to run, as one look at the queues found it.
type pending struct {
	queues []string      // every queue pushed to
	sizes  runtime.Sizes // summed over queues, after due jobs moved to ready
}

// pending moves the due delayed jobs and expired reservations of every
// queue to ready, then counts what is left.
func (h *Harness) pending(ctx context.Context) (pending, error) {
	var p pending
	queues, err := h.Engine.Queues(ctx)
	if err != nil {
		return p, err
	}
	p.queues = queues
	for _, q := range queues {
		if _, err := h.Engine.Migrate(ctx, q); err != nil {
			return p, err
		}
		s, err := h.Engine.Sizes(ctx, q)
		if err != nil {
			return p, err
		}
		p.sizes.Ready += s.Ready
		p.sizes.Delayed += s.Delayed
		p.sizes.Reserved += s.Reserved
	}
	return p, nil
}

// Sizes sums the sizes of every queue pushed to.
func (h *Harness) Sizes(ctx context.Context) (runtime.Sizes, error) {
	queues, err := h.Engine.Queues(ctx)
	if err != nil {
		return runtime.Sizes{}, err
	}
	var total runtime.Sizes
	for _, q := range queues {
		s, err := h.Engine.Sizes(ctx, q)
		if err != nil {
			return runtime.Sizes{}, err
		}
		total.Ready += s.Ready
		total.Delayed += s.Delayed
		total.Reserved += s.Reserved
		total.Failed += s.Failed
	}
	return total, nil
}
