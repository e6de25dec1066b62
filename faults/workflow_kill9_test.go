package faults_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	fw "github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestWorkflowKill9 runs 1,000 workflows of 10 steps (5,000 in long
// mode; a quarter of them in a slot of their own, the rest in their
// queue's), half diamonds (a root, four mids needing it, a join needing
// the mids, three tails needing the join, an end needing the join and
// the tails) and half fan-outs (a split that spawns 8 children and a
// gather needing their results), and one more whose split spawns 10,000
// children and a gather needing them all, on four workers, killing one
// with SIGKILL every 0.1 to 0.3 s and starting another in its place.
//
// Every workflow must end succeeded with every step succeeded; every
// step must run to success, handed exactly its parents' results in
// order (the handlers check); each step is released once (its job has
// one first attempt); and a step may run to success twice only if a
// killed worker held it between its end and its ack.
func TestWorkflowKill9(t *testing.T) {
	wfs := harness.Scale(1000, 5000)
	const fanOut, bigFanOut = 8, 10_000
	b := setup(t)
	f := b.fleet(t, func(c *fw.Config) {
		c.Concurrency = 16
		c.RetryAfter, c.Timeout = 2*time.Second, time.Second
	})
	ctx := runtime.WithDispatcher(b.ctx, b.engine)
	ids := make([]string, 0, wfs+1)
	steps := 0
	ms := func() int { return rand.IntN(50) }
	for w := range wfs {
		base := w*10 + 1 // the workflow's steps are base to base+9
		wf := runtime.NewWorkflow()
		if w%4 == 3 {
			// An ID of the caller's: the workflow lives in a slot of its
			// own, and each step's end is a call of its own before its ack.
			// The others live in their queue's slot, and the ack records
			// the end (step_ack).
			wf.WithID("own-" + runtime.NewID())
		}
		if w%2 == 0 {
			root := runtime.AddStep(wf, fw.WfRoot{Seq: base, Millis: ms()})
			mids := make(runtime.Steps[fw.WfMid], 4)
			for i := range mids {
				mids[i] = fw.WfMid{Seq: base + 1 + i, From: base, Millis: ms()}.AddTo(wf, root)
			}
			join := fw.WfJoin{Seq: base + 5, From: base + 1, N: 4, Millis: ms()}.AddTo(wf, mids)
			tails := make(runtime.Steps[fw.WfTail], 3)
			for i := range tails {
				tails[i] = fw.WfTail{Seq: base + 6 + i, From: base + 5, Millis: ms()}.AddTo(wf, join)
			}
			fw.WfEnd{Seq: base + 9, Join: base + 5, From: base + 6, N: 3, Millis: ms()}.AddTo(wf, join, tails)
		} else {
			runtime.AddStep(wf, fw.WfSplit{Seq: base, N: fanOut, Millis: ms()})
		}
		id, err := wf.Dispatch(ctx)
		require.NoError(t, err)
		require.Equal(t, w%4 != 3, strings.HasPrefix(id, "{"+queue+"}"), id)
		ids = append(ids, id)
		steps += 10
	}
	const bigBase = 1_000_000
	wf := runtime.NewWorkflow()
	runtime.AddStep(wf, fw.WfSplit{Seq: bigBase, N: bigFanOut, Millis: 5})
	bigID, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	ids = append(ids, bigID)
	steps += bigFanOut + 2
	// A static fan-out as wide, in its queue's slot: its root's ack
	// releases the first 1,000 children, and its worker the rest, a part
	// a call, before it acks the root; kills fall between the parts.
	const wideBase = 2_000_000
	wf = runtime.NewWorkflow()
	kids := make([]fw.WfChild, bigFanOut)
	for i := range kids {
		kids[i] = fw.WfChild{Seq: wideBase + 1 + i, Millis: 5}
	}
	children := runtime.AddSteps(wf, kids, runtime.After(runtime.AddStep(wf, fw.WfRoot{Seq: wideBase, Millis: 5})))
	runtime.AddStep(wf, fw.WfGather{Seq: wideBase + bigFanOut + 1, From: wideBase + 1, N: bigFanOut}, runtime.Needs(children.Need()))
	wideID, err := wf.Dispatch(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(wideID, "{"+queue+"}"), wideID)
	ids = append(ids, wideID)
	steps += bigFanOut + 2
	f.Start(4)

	var kills, inFlight, unacked int
	deadline := time.Now().Add(5 * time.Minute)
	for slot := 0; time.Now().Before(deadline); slot = (slot + 1) % 4 {
		time.Sleep(time.Duration(100+rand.IntN(200)) * time.Millisecond)
		if finishedLinks(f.Records()) >= steps*49/50 {
			break
		}
		p := f.Kill(slot)
		kills++
		inFlight += heldBy(t, b, p)
		unacked += reservedWith(t, b, p, 'F') // finished, not acked
		f.Replace(slot)
	}
	require.NotZero(t, kills)
	// Dependents are pushed as their parents end: wait until every step
	// has run, then until the queue is empty.
	require.Eventually(t, func() bool { return finishedLinks(f.Records()) == steps }, 2*time.Minute, 200*time.Millisecond,
		"every step of every workflow runs")
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(10 * time.Second)

	bySeq := map[int]*seqRuns{}
	var mismatches []string
	for _, r := range f.Records() {
		switch r.Kind {
		case 'W':
			mismatches = append(mismatches, itoa(r.Seq)+": "+r.Label)
			continue
		case 'S', 'F':
		default:
			continue
		}
		s := bySeq[r.Seq]
		if s == nil {
			s = &seqRuns{}
			bySeq[r.Seq] = s
		}
		if r.Kind == 'S' {
			s.starts = append(s.starts, r)
		} else {
			s.finishes = append(s.finishes, r)
		}
	}
	var missing, releasedTwice, ranTwice int
	count := func(seq int) {
		s := bySeq[seq]
		if s == nil || len(s.finishes) == 0 {
			missing++
			return
		}
		firsts := 0
		for _, st := range s.starts {
			if st.Attempt == 1 {
				firsts++
			}
		}
		releasedTwice += max(firsts-1, 0)
		ranTwice += len(s.finishes) - 1
	}
	for w := range wfs {
		for k := range 10 {
			count(w*10 + 1 + k)
		}
	}
	for k := range bigFanOut + 2 {
		count(bigBase + k)
		count(wideBase + k)
	}

	in := runtime.NewInspector(b.engine)
	var notOK, stepsNotOK, stepsSeen int
	for _, id := range ids {
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		if info.State != runtime.WorkflowSucceeded {
			notOK++
		}
		for _, s := range info.Steps {
			stepsSeen++
			if s.State != runtime.StepSucceeded {
				stepsNotOK++
			}
		}
	}
	t.Logf("figures: %d workflows, %d steps, %d kills, %d steps in flight at the kills (%d of them finished, not yet acked); missing %d, released twice %d, run to success twice %d, inputs wrong %d; workflows not succeeded %d, steps not succeeded %d",
		len(ids), steps, kills, inFlight, unacked, missing, releasedTwice, ranTwice, len(mismatches), notOK, stepsNotOK)
	require.Empty(t, head(mismatches, 10), "every step is handed exactly its parents' results, in order")
	require.Zero(t, missing, "every step runs to success")
	require.Zero(t, releasedTwice, "each step is released and pushed once")
	require.LessOrEqual(t, ranTwice, unacked, "a step runs twice only if its worker died between its end and its ack")
	require.Zero(t, notOK, "every workflow succeeds")
	require.Equal(t, steps, stepsSeen, "every workflow holds its steps, spawned ones too")
	require.Zero(t, stepsNotOK, "every step succeeded")
	require.Empty(t, f.Deaths(), "no worker died but those killed")
}
