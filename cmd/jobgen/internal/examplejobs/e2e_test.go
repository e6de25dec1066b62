package examplejobs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/examplejobs"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// handlers implements the generated Handlers interface.
type handlers struct{}

func (handlers) HandleSendEmail(ctx context.Context, job examplejobs.SendEmail) error {
	examplejobs.Record(ctx, "SendEmail "+job.To)
	return nil
}

func (handlers) HandleResizeImage(ctx context.Context, job examplejobs.ResizeImage) error {
	examplejobs.Record(ctx, "ResizeImage "+job.Path)
	return nil
}

func (handlers) HandleAuditEntry(ctx context.Context, job examplejobs.AuditEntry) error {
	examplejobs.Record(ctx, fmt.Sprintf("AuditEntry %s %d", job.Action, job.UserID))
	return nil
}

func (handlers) HandleQuoteShipping(ctx context.Context, job examplejobs.QuoteShipping) (examplejobs.Quote, error) {
	select {
	case <-time.After(job.Sleep):
	case <-ctx.Done():
		return examplejobs.Quote{}, ctx.Err()
	}
	return examplejobs.Quote{Cents: 5 * job.Grams, Days: 2}, nil
}

func (handlers) HandleChargeCard(ctx context.Context, job examplejobs.ChargeCard) error {
	examplejobs.Record(ctx, "ChargeCard "+job.OrderID)
	return examplejobs.ErrDeclined
}

// bundle is what an end-to-end test needs.
type bundle struct {
	// ctx dispatches through engine and records into log.
	ctx    context.Context
	engine *runtime.Engine
	router *runtime.Router
	log    *examplejobs.Log
}

func setup(t *testing.T, be redistest.Backend) bundle {
	t.Helper()
	engine, err := runtime.Open(context.Background(), be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = engine.Close() })
	router := runtime.NewRouter()
	examplejobs.Register(router, handlers{})
	require.NoError(t, router.Err())
	log := &examplejobs.Log{}
	// The context, not the process-wide defaults, names the dispatcher
	// and router, so that the backends run in parallel.
	ctx := runtime.WithDispatcher(context.Background(), engine)
	ctx = runtime.WithRouter(ctx, router)
	ctx = examplejobs.WithLog(ctx, log)
	return bundle{ctx: ctx, engine: engine, router: router, log: log}
}

// startWorker runs a worker on the package's queues until the test ends.
func (b bundle) startWorker(t *testing.T) {
	t.Helper()
	w, err := runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{
		Queues:      []string{"emails", "billing", "default", "audit", "reports", "quotes"},
		Concurrency: 4,
		Sleep:       50 * time.Millisecond,
		Timeout:     10 * time.Second,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("worker did not stop")
		}
	})
}

// waitFor waits until the log has recorded every one of whats.
func (b bundle) waitFor(t *testing.T, whats ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, w := range whats {
		for {
			if _, ok := b.log.Find(w); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q was not recorded in time; recorded: %+v", w, b.log.Entries())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (b bundle) entry(t *testing.T, what string) examplejobs.Entry {
	t.Helper()
	e, ok := b.log.Find(what)
	require.True(t, ok, "%q not recorded", what)
	return e
}

// TestEndToEnd dispatches the generated jobs every way there is and has a
// worker process them, on a real Redis and an embedded one.
func TestEndToEnd(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be)
			ctx := b.ctx

			// Immediate, with the annotation's queue (emails).
			sent, err := examplejobs.SendEmail{To: "now@example.com", Subject: "hi"}.Dispatch(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, sent)

			// Delayed.
			delayedAt := time.Now()
			_, err = examplejobs.ResizeImage{Path: "later.png", Sizes: []int{64}}.Delay(500 * time.Millisecond).Dispatch(ctx)
			require.NoError(t, err)

			// Chained: each link runs only after the one before it.
			_, err = examplejobs.ResizeImage{Path: "first.png"}.WithChain(
				examplejobs.Welcome{UserID: 7},
				examplejobs.SendEmail{To: "third@example.com"},
			).Dispatch(ctx)
			require.NoError(t, err)

			// To another queue, chaining the setters of PendingDispatch.
			_, err = examplejobs.ResizeImage{Path: "report.png"}.OnQueue("reports").Delay(0).Dispatch(ctx)
			require.NoError(t, err)

			// Conditional.
			id, err := examplejobs.SendEmail{To: "never@example.com"}.DispatchIf(ctx, false)
			require.NoError(t, err)
			require.Empty(t, id)
			id, err = examplejobs.SendEmail{To: "unless@example.com"}.DispatchUnless(ctx, false)
			require.NoError(t, err)
			require.NotEmpty(t, id)

			// Failing for good: tried twice, then the failed hook runs.
			_, err = examplejobs.ChargeCard{OrderID: "o-1", Cents: 999}.Dispatch(ctx)
			require.NoError(t, err)

			b.startWorker(t)
			b.waitFor(t,
				"SendEmail now@example.com",
				"ResizeImage later.png",
				"ResizeImage first.png", "Welcome 7", "SendEmail third@example.com",
				"AuditEntry welcomed 7", // dispatched by Welcome's Handle
				"ResizeImage report.png",
				"SendEmail unless@example.com",
				"ChargeCard o-1 failed (declined: true)",
			)

			now := b.entry(t, "SendEmail now@example.com")
			at := idMillis(t, sent)
			require.Equal(t, runtime.JobInfo{ID: sent, Name: "examplejobs.SendEmail", Queue: "emails", Attempt: 1,
				Worker: "worker", DispatchedAt: time.UnixMilli(at)}, now.Job)

			later := b.entry(t, "ResizeImage later.png")
			require.Equal(t, "default", later.Job.Queue)
			require.GreaterOrEqual(t, later.At.Sub(delayedAt), 500*time.Millisecond, "the delayed job ran early")

			first, second, third := b.entry(t, "ResizeImage first.png"), b.entry(t, "Welcome 7"), b.entry(t, "SendEmail third@example.com")
			require.False(t, second.At.Before(first.At), "chain ran out of order")
			require.False(t, third.At.Before(second.At), "chain ran out of order")
			require.Equal(t, "users.welcome", second.Job.Name, "the name= key is the wire name")
			require.Equal(t, "emails", third.Job.Queue, "a chained job keeps its annotated queue")

			require.Equal(t, "reports", b.entry(t, "ResizeImage report.png").Job.Queue)
			require.Equal(t, "audit", b.entry(t, "AuditEntry welcomed 7").Job.Queue)
			_, ok := b.log.Find("SendEmail never@example.com")
			require.False(t, ok, "DispatchIf(false) dispatched")

			var attempts []int
			for _, e := range b.log.Entries() {
				if e.What == "ChargeCard o-1" {
					attempts = append(attempts, e.Job.Attempt)
				}
			}
			require.Equal(t, []int{1, 2}, attempts, "max_exceptions=2")
			failed, err := runtime.NewInspector(b.engine).Failed().List(ctx, "billing", 0, 10)
			require.NoError(t, err)
			require.Len(t, failed, 1)
		})
	}
}

// TestDispatchSync runs handlers in place through the context's router.
func TestDispatchSync(t *testing.T) {
	be := redistest.Backends(t)[1] // no Redis is touched; any engine will do
	b := setup(t, be)
	require.NoError(t, examplejobs.SendEmail{To: "sync@example.com"}.DispatchSync(b.ctx))
	e := b.entry(t, "SendEmail sync@example.com")
	require.Equal(t, "sync", e.Job.Queue)

	err := examplejobs.ChargeCard{OrderID: "o-2"}.DispatchSync(b.ctx)
	require.True(t, errors.Is(err, examplejobs.ErrDeclined), "got %v", err)
}

// TestJobOptions checks that the annotations reach runtime.JobOptions.
func TestJobOptions(t *testing.T) {
	require.Equal(t, runtime.JobOptions{
		Queue: "emails", Tries: 3, Backoff: []time.Duration{50 * time.Millisecond},
		Timeout: 5 * time.Second, Tags: []string{"mail"},
	}, examplejobs.SendEmail{}.JobOptions())
	require.Equal(t, runtime.JobOptions{Queue: "billing", Tries: 3, Backoff: []time.Duration{100 * time.Millisecond}, MaxExceptions: 2},
		examplejobs.ChargeCard{}.JobOptions())
	require.Equal(t, "users.welcome", examplejobs.Welcome{}.JobName())
	require.Equal(t, "examplejobs.ResizeImage", examplejobs.ResizeImage{}.JobName())
}

// idMillis reads the unix ms a job ID begins with: its first ten
// Crockford base32 digits (runtime.NewID).
func idMillis(t *testing.T, id string) int64 {
	t.Helper()
	const digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	require.Len(t, id, 26)
	var v uint64
	for i := range 10 {
		d := strings.IndexByte(digits, id[i])
		require.GreaterOrEqual(t, d, 0, "ID %q", id)
		v = v<<5 | uint64(d)
	}
	return int64(v) // the first digit carries 3 bits, the other nine 45: 48 in all
}

// TestAwaitThroughGeneratedCode awaits the typed results of generated
// jobs: one from a Handlers method, one from a job's own Handle method,
// one that is slow, and one that fails.
func TestAwaitThroughGeneratedCode(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be)
			b.startWorker(t)
			wait := func(d time.Duration) (context.Context, context.CancelFunc) { return context.WithTimeout(b.ctx, d) }

			id, err := examplejobs.QuoteShipping{Grams: 300}.Dispatch(b.ctx)
			require.NoError(t, err)
			ctx, cancel := wait(10 * time.Second)
			defer cancel()
			quote, err := examplejobs.QuoteShipping{}.Await(ctx, id)
			require.NoError(t, err)
			require.Equal(t, examplejobs.Quote{Cents: 1500, Days: 2}, quote)
			again, ok, err := examplejobs.QuoteShipping{}.Result(b.ctx, id)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, quote, again)

			id, err = examplejobs.RefundOrder{OrderID: "o-7", Cents: 250}.Dispatch(b.ctx)
			require.NoError(t, err)
			receipt, err := examplejobs.RefundOrder{}.Await(ctx, id)
			require.NoError(t, err)
			require.Equal(t, examplejobs.Receipt{OrderID: "o-7", Cents: 250}, receipt)

			// A slow job: the wait times out, and the result comes later.
			id, err = examplejobs.QuoteShipping{Grams: 1, Sleep: time.Second}.Dispatch(b.ctx)
			require.NoError(t, err)
			short, cancelShort := wait(100 * time.Millisecond)
			defer cancelShort()
			_, err = examplejobs.QuoteShipping{}.Await(short, id)
			require.ErrorIs(t, err, runtime.ErrAwaitTimeout)
			quote, err = examplejobs.QuoteShipping{}.Await(ctx, id)
			require.NoError(t, err)
			require.Equal(t, int64(5), quote.Cents)

			// A job that fails: its failure, typed, with its message.
			id, err = examplejobs.RefundOrder{OrderID: "o-8"}.Dispatch(b.ctx)
			require.NoError(t, err)
			_, err = examplejobs.RefundOrder{}.Await(ctx, id)
			var failed *runtime.JobFailedError
			require.ErrorAs(t, err, &failed)
			require.Equal(t, "refund of 0 cents for order o-8", failed.Message)
		})
	}
}
