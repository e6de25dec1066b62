package jobtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // Harness runs on embedded:// unless told otherwise
)

// HarnessConfig configures a Harness. The zero value is usable.
type HarnessConfig struct {
	// Engine configures the harness's engine; its Prefix defaults to
	// "jobtest". Set Keys here to run encrypted jobs.
	Engine runtime.EngineConfig
	// Worker configures the workers that Drain and DrainAll run. They set
	// its Queues (every queue pushed to) and StopWhenEmpty; the Logger
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

// Context returns ctx with the harness's engine as dispatcher for the
// default connection and its router for DispatchSync, through
// runtime.HandlerContext: what a worker's handlers get, and no more.
func (h *Harness) Context(ctx context.Context) context.Context {
	return runtime.HandlerContext(ctx, h.Engine, h.Router)
}

// Drain runs workers over every queue pushed to until no queue has a
// ready job: the jobs that were ready, the delayed jobs and retries that
// are due, the jobs they dispatch, and so on. It returns when that is so,
// or when ctx is done. Jobs delayed past that point stay delayed: a later
// Drain runs them once they are due, and DrainAll waits for them. The
// jobs of a paused queue stay until it is resumed. Failed jobs are in
// runtime.NewInspector(h.Engine).Failed().
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
	sizes  runtime.Sizes // summed over the queues not paused, after due jobs moved to ready
	now    time.Time     // the Redis clock at the look
	next   time.Time     // when a delayed job falls due or a lease runs out; zero if never
}

// pending moves the due delayed jobs and expired reservations of every
// queue not paused to ready, then counts what is left there.
func (h *Harness) pending(ctx context.Context) (pending, error) {
	var p pending
	queues, err := runtime.NewInspector(h.Engine).Queues(ctx)
	if err != nil {
		return p, err
	}
	p.queues = queues
	for _, q := range queues {
		// A paused queue's jobs wait for its resume; no worker takes them.
		paused, err := runtime.NewInspector(h.Engine).QueuePaused(ctx, q)
		if err != nil {
			return p, err
		}
		if paused {
			continue
		}
		m, err := runtime.NewBroker(h.Engine).Migrate(ctx, q)
		if err != nil {
			return p, err
		}
		if p.now.IsZero() {
			p.now = m.Now
		}
		p.next = earliest(earliest(p.next, m.NextDue), m.NextExpiry)
		s, err := runtime.NewInspector(h.Engine).Sizes(ctx, q)
		if err != nil {
			return p, err
		}
		p.sizes.Ready += s.Ready
		p.sizes.Delayed += s.Delayed
		p.sizes.Reserved += s.Reserved
	}
	return p, nil
}

// DrainAll is Drain that also waits for the jobs that are not due yet:
// delayed jobs, retries waiting out their backoff, and jobs reserved by a
// worker that is gone, whose lease must run out first. It runs each as it
// falls due, with the jobs it dispatches, and returns once no queue but
// a paused one has a ready, delayed or reserved job (as Sidekiq's
// drain_all, or Oban's drain_queue with_scheduled, but in real time).
// Failed jobs are in runtime.NewInspector(h.Engine).Failed().
//
// A job delayed a minute keeps DrainAll a minute, so give ctx a deadline:
// if it is done first, DrainAll returns an error that wraps ctx's and
// says how many jobs were left.
func (h *Harness) DrainAll(ctx context.Context) error {
	ctx = h.Context(ctx)
	for {
		p, err := h.drain(ctx)
		if err != nil {
			return h.left(ctx, err)
		}
		if p.sizes.Total() == 0 {
			return nil
		}
		wait := maxPoll
		if !p.next.IsZero() {
			wait = min(max(p.next.Sub(p.now), time.Millisecond), maxPoll)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return h.left(ctx, ctx.Err())
		}
	}
}

// left adds to an error of DrainAll's ctx what was left to run.
func (h *Harness) left(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	s, serr := h.Sizes(sctx)
	if serr != nil {
		return fmt.Errorf("jobtest: drain all: %w", err)
	}
	return fmt.Errorf("jobtest: drain all: %d ready, %d delayed and %d reserved jobs left: %w", s.Ready, s.Delayed, s.Reserved, err)
}

// maxPoll is the longest DrainAll waits before it looks at the queues
// again, for jobs pushed from outside its workers.
const maxPoll = 100 * time.Millisecond

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// Sizes sums the sizes of every queue pushed to.
func (h *Harness) Sizes(ctx context.Context) (runtime.Sizes, error) {
	queues, err := runtime.NewInspector(h.Engine).Queues(ctx)
	if err != nil {
		return runtime.Sizes{}, err
	}
	var total runtime.Sizes
	for _, q := range queues {
		s, err := runtime.NewInspector(h.Engine).Sizes(ctx, q)
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
