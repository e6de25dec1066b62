package faults_test

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestChainKill9 runs 1,000 chains of three links (5,000 in long mode)
// on four workers, killing one with SIGKILL every 0.1 to 0.3 s and starting
// another in its place. Every link must run, each after the link before
// it finished; each continuation must be pushed exactly once (a link has
// one first attempt); and a link may run twice only if a killed worker
// held it (it died between the link's end and its ack).
func TestChainKill9(t *testing.T) {
	chains := harness.Scale(1000, 5000)
	const links = 3
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		c.Concurrency = 16
		c.RetryAfter, c.Timeout = 2*time.Second, time.Second
	})
	ctx := runtime.WithDispatcher(b.ctx, b.engine)
	for c := range chains {
		jobs := make([]runtime.Job, links)
		for k := range jobs {
			jobs[k] = faultworker.Task{Seq: c*links + k + 1, Millis: 30 + rand.IntN(70)}
		}
		_, err := runtime.Chain(jobs...).OnQueue(queue).Dispatch(ctx)
		require.NoError(t, err)
	}
	f.Start(4)

	var kills, inFlight, unacked int
	deadline := time.Now().Add(5 * time.Minute)
	for slot := 0; time.Now().Before(deadline); slot = (slot + 1) % 4 {
		time.Sleep(time.Duration(100+rand.IntN(200)) * time.Millisecond)
		if finishedLinks(f.Records()) >= chains*links*9/10 {
			break
		}
		p := f.Kill(slot)
		kills++
		inFlight += heldBy(t, b, p)
		unacked += reservedWith(t, b, p, 'F') // finished, not acked
		f.Replace(slot)
	}
	require.NotZero(t, kills)
	harness.Drain(t, b.engine, queue, time.Minute)
	// The last links are pushed as the links before them end: drain
	// again until every chain has run through.
	require.Eventually(t, func() bool { return finishedLinks(f.Records()) == chains*links }, time.Minute, 100*time.Millisecond,
		"every link of every chain runs")
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(10 * time.Second)

	bySeq := map[int]*seqRuns{}
	for _, r := range f.Records() {
		if r.Kind != 'S' && r.Kind != 'F' {
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
	var missing, outOfOrder, pushedTwice, ranTwice int
	for c := range chains {
		for k := range links {
			s := bySeq[c*links+k+1]
			if s == nil || len(s.finishes) == 0 {
				missing++
				continue
			}
			firsts := 0
			for _, st := range s.starts {
				if st.Attempt == 1 {
					firsts++
				}
			}
			pushedTwice += max(firsts-1, 0)
			ranTwice += len(s.finishes) - 1
			if k > 0 {
				prev := bySeq[c*links+k]
				if prev == nil || len(prev.finishes) == 0 || s.firstStart().Before(prev.firstFinish()) {
					outOfOrder++
				}
			}
		}
	}
	t.Logf("figures: %d chains of %d links, %d kills, %d links in flight at the kills (%d of them finished, not yet acked); missing %d, out of order %d, continuations pushed twice %d, links run twice %d",
		chains, links, kills, inFlight, unacked, missing, outOfOrder, pushedTwice, ranTwice)
	require.Zero(t, missing, "every link runs")
	require.Zero(t, outOfOrder, "each link starts after the one before it finished")
	require.Zero(t, pushedTwice, "each continuation is pushed once")
	require.LessOrEqual(t, ranTwice, unacked, "a link runs twice only if its worker died between its end and its ack")
	require.Empty(t, f.Deaths(), "no worker died but those killed")
}

// seqRuns are the ledger's starts and finishes of one task.
type seqRuns struct{ starts, finishes []faultworker.Record }

func (s *seqRuns) firstStart() time.Time  { return earliestAt(s.starts) }
func (s *seqRuns) firstFinish() time.Time { return earliestAt(s.finishes) }

func earliestAt(recs []faultworker.Record) time.Time {
	ts := make([]time.Time, len(recs))
	for i, r := range recs {
		ts[i] = r.At
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	return ts[0]
}

// finishedLinks counts the tasks that finished at least once.
func finishedLinks(recs []faultworker.Record) int {
	done := map[int]bool{}
	for _, r := range recs {
		if r.Kind == 'F' {
			done[r.Seq] = true
		}
	}
	return len(done)
}
