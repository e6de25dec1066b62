package jobotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	jobotel "github.com/jobgen/jobgen/otel"
	"github.com/jobgen/jobgen/runtime"
)

// dispatchDiamond dispatches, inside a request's span, a workflow of
// steps 1 and 2, then 3 after both, then 4 after 3, runs it, and
// returns the request's span.
func dispatchDiamond(t *testing.T, b *bundle) tracetestSpan {
	t.Helper()
	b.handle(func(context.Context, step, runtime.JobInfo) error { return nil })
	ctx, request := b.tp.Tracer("test").Start(b.ctx, "request")
	wf := runtime.NewWorkflow()
	one := runtime.AddStep(wf, step{N: 1})
	two := runtime.AddStep(wf, step{N: 2})
	three := runtime.AddStep(wf, step{N: 3}, runtime.After(one, two))
	runtime.AddStep(wf, step{N: 4}, runtime.After(three))
	_, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	request.End()
	b.drain(t)
	return b.spans(func(s tracetestSpan) bool { return s.Name == "request" })[0]
}

// firstSend is the one send span of the workflow's first steps, 1 and 2,
// pushed together: a child of the request.
func firstSend(t *testing.T, b *bundle, req tracetestSpan) tracetestSpan {
	t.Helper()
	got := b.spans(func(s tracetestSpan) bool {
		return s.SpanKind == trace.SpanKindProducer && s.Parent.SpanID() == req.SpanContext.SpanID()
	})
	require.Len(t, got, 1, "sends under the request")
	require.Equal(t, "2", attr(got[0], "messaging.batch.message_count"))
	childOf(t, got[0], req)
	return got[0]
}

// releaser returns the process span of step 1 or 2 that the send of step
// 3 is a child of: the worker of the parent that finished last pushes it.
func releaser(t *testing.T, b *bundle, send tracetestSpan) tracetestSpan {
	t.Helper()
	for _, n := range []int{1, 2} {
		if p := b.process(b.id(n)); len(p) == 1 && p[0].SpanContext.SpanID() == send.Parent.SpanID() {
			return p[0]
		}
	}
	require.Fail(t, "the send of step 3 is not a child of the process span of step 1 or 2", "parent %s", send.Parent.SpanID())
	return tracetestSpan{}
}

// With ChildOf, every span of a workflow's steps is in the trace of the
// request that dispatched it: the first steps' sends are children of the
// request, a released step's send a child of the attempt of the parent
// that released it, and each attempt a child of its send.
func TestWorkflowStepsShareOneTrace(t *testing.T) {
	forEachBackend(t, jobotel.Config{ChildOf: true}, func(t *testing.T, b *bundle) {
		req := dispatchDiamond(t, b)
		first := firstSend(t, b, req)
		for n := 1; n <= 4; n++ {
			id := b.id(n)
			require.NotEmpty(t, id, "step %d ran", n)
			procs := b.process(id)
			require.Len(t, procs, 1, "step %d", n)
			send := first
			if n > 2 {
				send = b.send(t, id)
			}
			childOf(t, procs[0], send)
		}
		releaser(t, b, b.send(t, b.id(3)))
		childOf(t, b.send(t, b.id(4)), b.process(b.id(3))[0])
		for _, s := range b.exp.GetSpans() {
			require.Equal(t, req.SpanContext.TraceID(), s.SpanContext.TraceID(), "%s", s.Name)
		}
	})
}

// Without ChildOf, a step's attempt starts a trace of its own linked to
// its send, as a chain link's does, and a released step's send is a
// child of the attempt of the parent that released it: the trace of
// each attempt holds the sends of the steps it released.
func TestWorkflowReleasedStepSendIsChildOfItsParent(t *testing.T) {
	forEachBackend(t, jobotel.Config{}, func(t *testing.T, b *bundle) {
		req := dispatchDiamond(t, b)
		first := firstSend(t, b, req)
		for n := 1; n <= 4; n++ {
			procs := b.process(b.id(n))
			require.Len(t, procs, 1, "step %d", n)
			send := first
			if n > 2 {
				send = b.send(t, b.id(n))
			}
			linkedTo(t, procs[0], send)
		}
		require.Equal(t, trace.SpanKindConsumer, releaser(t, b, b.send(t, b.id(3))).SpanKind)
		childOf(t, b.send(t, b.id(4)), b.process(b.id(3))[0])
		require.Equal(t, "link", attr(b.send(t, b.id(4)), "jobgen.dispatch.kind"))
	})
}
