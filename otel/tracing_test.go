package jobotel_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	jobotel "github.com/jobgen/jobgen/otel"
	"github.com/jobgen/jobgen/runtime"
)

// TestChainOfThree: the request's span is the parent of the chain's
// send; each link's process span links to the send that pushed it; each
// next link is sent from within the process span of the link before it;
// the baggage of the request reaches every handler.
func TestChainOfThree(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		var tenants []string
		b.handle(func(ctx context.Context, s step, _ runtime.JobInfo) error {
			tenants = append(tenants, baggage.FromContext(ctx).Member("tenant").Value())
			return nil
		})
		m, err := baggage.NewMember("tenant", "acme")
		require.NoError(t, err)
		bag, err := baggage.New(m)
		require.NoError(t, err)
		ctx, request := b.tp.Tracer("test").Start(baggage.ContextWithBaggage(b.ctx, bag), "request")
		_, err = runtime.Chain(step{N: 1}, step{N: 2}, step{N: 3}).Dispatch(ctx)
		require.NoError(t, err)
		request.End()
		b.drain(t)

		require.Equal(t, []string{"acme", "acme", "acme"}, tenants)
		req := b.spans(func(s tracetestSpan) bool { return s.Name == "request" })[0]
		var prev tracetestSpan
		for n := 1; n <= 3; n++ {
			id := b.id(n)
			send := b.send(t, id)
			procs := b.process(id)
			require.Len(t, procs, 1)
			proc := procs[0]
			require.Equal(t, "send default", send.Name)
			require.Equal(t, "process default", proc.Name)
			require.Equal(t, trace.SpanKindProducer, send.SpanKind)
			require.Equal(t, trace.SpanKindConsumer, proc.SpanKind)
			if n == 1 {
				childOf(t, send, req)
				require.Equal(t, "one", attr(send, "jobgen.dispatch.kind"))
			} else {
				childOf(t, send, prev)
				require.Equal(t, "link", attr(send, "jobgen.dispatch.kind"))
			}
			linkedTo(t, proc, send)
			require.Equal(t, map[string]string{
				"messaging.system": "jobgen", "messaging.operation.type": "process", "messaging.destination.name": "default",
				"messaging.message.id": id, "jobgen.job.name": "test.Step", "jobgen.job.attempt": "1",
				"jobgen.worker.name": "w1", "jobgen.outcome": "ok",
			}, attrs(proc, "messaging.system", "messaging.operation.type", "messaging.destination.name",
				"messaging.message.id", "jobgen.job.name", "jobgen.job.attempt", "jobgen.worker.name", "jobgen.outcome"))
			require.Equal(t, codes.Unset, proc.Status.Code)
			prev = proc
		}
		require.Len(t, b.exp.GetSpans(), 7, "request, three sends, three processes")
	})
}

// TestOutcomes: each way an attempt ends is told on its span, and every
// attempt of a job links to the one send that dispatched it, through
// releases, retries and a retry from the failed store.
func TestOutcomes(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		retryFromStore := false
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error {
			switch {
			case info.Attempt > 1:
				return nil
			case s.N == 1: // retried after an error
				return errBoom
			case s.N == 2: // released by its handler
				return runtime.ReleaseRequest(0)
			case s.N == 3: // times out once
				<-ctx.Done()
				return ctx.Err()
			case s.N == 4 && !retryFromStore: // fails for good, then is retried from the failed store
				return errBoom
			}
			return nil
		})
		two := runtime.JobOptions{Tries: 2}
		for _, s := range []step{{N: 1, opts: two}, {N: 2, opts: two}, {N: 3, opts: runtime.JobOptions{Tries: 2, Timeout: 100 * time.Millisecond}}, {N: 4}} {
			_, err := runtime.Dispatch(b.ctx, s)
			require.NoError(t, err)
		}
		b.drain(t)
		retryFromStore = true
		got, err := runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", b.id(4))
		require.NoError(t, err)
		require.Equal(t, []string{b.id(4)}, got)
		b.drain(t)

		type want struct {
			outcome string
			status  codes.Code
			events  int // exception events
		}
		for n, wants := range map[int][]want{
			1: {{"error", codes.Error, 1}, {"ok", codes.Unset, 0}},
			2: {{"released", codes.Unset, 0}, {"ok", codes.Unset, 0}},
			3: {{"timed_out", codes.Error, 1}, {"ok", codes.Unset, 0}},
			4: {{"failed", codes.Error, 1}, {"ok", codes.Unset, 0}},
		} {
			id := b.id(n)
			send := b.send(t, id)
			procs := b.process(id)
			require.Len(t, procs, len(wants), "step %d", n)
			for i, w := range wants {
				p := procs[i]
				linkedTo(t, p, send)
				var got want
				got.outcome, got.status, got.events = attr(p, "jobgen.outcome"), p.Status.Code, exceptions(p)
				require.Equal(t, w, got, "step %d, span %d", n, i+1)
			}
		}
		// A retry from the failed store starts the attempts again.
		require.Equal(t, []string{"1", "1"}, []string{attr(b.process(b.id(4))[0], "jobgen.job.attempt"), attr(b.process(b.id(4))[1], "jobgen.job.attempt")})
		require.Equal(t, []string{"1", "2"}, []string{attr(b.process(b.id(1))[0], "jobgen.job.attempt"), attr(b.process(b.id(1))[1], "jobgen.job.attempt")})
	})
}

// TestChildOf: with ChildOf, an attempt's span is a child of its send.
func TestChildOf(t *testing.T) {
	forEachBackend(t, jobotel.Config{ChildOf: true}, func(t *testing.T, b *bundle) {
		b.handle(func(context.Context, step, runtime.JobInfo) error { return nil })
		id, err := runtime.Dispatch(b.ctx, step{N: 1})
		require.NoError(t, err)
		b.drain(t)
		procs := b.process(id)
		require.Len(t, procs, 1)
		childOf(t, procs[0], b.send(t, id))
		require.Empty(t, procs[0].Links)
	})
}

// TestOneSendPerBatch: a batch is one send span for the call, and every
// job of it links to that span.
func TestOneSendPerBatch(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		b.handle(func(context.Context, step, runtime.JobInfo) error { return nil })
		_, err := runtime.NewBatch(step{N: 1}, step{N: 2}, step{N: 3}).Dispatch(b.ctx)
		require.NoError(t, err)
		b.drain(t)
		sends := b.spans(func(s tracetestSpan) bool { return s.SpanKind == trace.SpanKindProducer })
		require.Len(t, sends, 1)
		require.Equal(t, map[string]string{"jobgen.dispatch.kind": "batch", "messaging.batch.message_count": "3", "messaging.message.id": ""},
			attrs(sends[0], "jobgen.dispatch.kind", "messaging.batch.message_count", "messaging.message.id"))
		for n := 1; n <= 3; n++ {
			procs := b.process(b.id(n))
			require.Len(t, procs, 1)
			linkedTo(t, procs[0], sends[0])
		}
	})
}

func exceptions(s tracetestSpan) int {
	n := 0
	for _, e := range s.Events {
		if e.Name == "exception" {
			n++
		}
	}
	return n
}

// TestOneSendPerManyPush: a PushMany is one send span; to several queues
// it names no destination. Jobs pushed again keep the context of their
// first push, so the engine sees the same payloads and takes the push.
func TestOneSendPerManyPush(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		var out []runtime.Outgoing
		for i, q := range []string{"a", "a", "b"} {
			env, err := runtime.NewPendingDispatch(step{N: i}).OnQueue(q).Envelope()
			require.NoError(t, err)
			out = append(out, runtime.Outgoing{Envelope: env})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out[:2]))
		require.NoError(t, b.engine.PushMany(b.ctx, out[2:]))
		first := out[0].Envelope.Headers["traceparent"]
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{out[0], out[2]})) // pushed again: the same jobs
		require.Equal(t, first, out[0].Envelope.Headers["traceparent"])
		var got []map[string]string
		for _, s := range b.exp.GetSpans() {
			m := attrs(s, "jobgen.dispatch.kind", "messaging.destination.name", "messaging.batch.message_count")
			m["name"] = s.Name
			got = append(got, m)
		}
		require.Equal(t, []map[string]string{
			{"name": "send a", "jobgen.dispatch.kind": "many", "messaging.destination.name": "a", "messaging.batch.message_count": "2"},
			{"name": "send b", "jobgen.dispatch.kind": "one", "messaging.destination.name": "b", "messaging.batch.message_count": ""},
			{"name": "send", "jobgen.dispatch.kind": "many", "messaging.destination.name": "", "messaging.batch.message_count": "2"},
		}, got)
		for _, o := range out {
			require.Contains(t, o.Envelope.Headers, "traceparent")
		}
	})
}

// TestResultSize: the span of an attempt that stored a result says its
// size; one without a result has no such attribute.
func TestResultSize(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error {
			if s.N == 1 {
				return runtime.RecordResult(ctx, "twelve bytes")
			}
			return nil
		})
		for _, n := range []int{1, 2} {
			_, err := runtime.Dispatch(b.ctx, step{N: n})
			require.NoError(t, err)
		}
		b.drain(t)
		require.Equal(t, "13", attr(b.process(b.id(1))[0], "jobgen.result.size"))
		require.Equal(t, "", attr(b.process(b.id(2))[0], "jobgen.result.size"))
	})
}

// TestSettledAfterTheNextAttemptStarted: an attempt whose settle event
// comes after the job's next attempt started in this process (a release
// with no delay, taken at once by another slot) still ends its own span
// with its own outcome, and the next attempt's span with its own.
func TestSettledAfterTheNextAttemptStarted(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		started := make(chan struct{})
		seen := make(chan struct{}) // the Tracing has seen the first attempt's release
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error {
			if info.Attempt == 1 {
				return runtime.ReleaseRequest(0)
			}
			close(started)
			// Settled before the Tracing saw the first attempt's
			// release, this attempt would end that span as "unknown".
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
			}
			return nil
		})
		id, err := runtime.Dispatch(b.ctx, step{N: 1, opts: runtime.JobOptions{Tries: 2}})
		require.NoError(t, err)
		cfg := runtime.WorkerConfig{StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Concurrency: 2,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		cfg.Middleware = append(cfg.Middleware, b.tr.Middleware())
		w, err := runtime.NewWorker(b.engine, b.router, cfg)
		require.NoError(t, err)
		// The first attempt's release event is held until the second
		// attempt has started, before the Tracing sees it.
		w.Subscribe(func(ev runtime.Event) {
			if ev.Kind == runtime.JobReleased && ev.Attempt == 1 {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
				}
			}
		})
		b.tr.Attach(w)
		w.Subscribe(func(ev runtime.Event) { // called after the Tracing's
			if ev.Kind == runtime.JobReleased && ev.Attempt == 1 {
				close(seen)
			}
		})
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		require.NoError(t, w.Run(ctx))
		require.NoError(t, ctx.Err(), "worker did not stop by itself")

		procs := b.process(id)
		require.Len(t, procs, 2)
		got := map[string]string{}
		for _, p := range procs {
			got[attr(p, "jobgen.job.attempt")] = attr(p, "jobgen.outcome")
		}
		require.Equal(t, map[string]string{"1": "released", "2": "ok"}, got)
	})
}
