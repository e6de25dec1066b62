package faults_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestPoisonMix runs jobs among which 1% have payload bytes that do not
// decode, 1% carry a job name no handler is registered for and 1% have
// handlers that panic. The failed store ends up holding exactly those
// jobs; a panicking job is attempted exactly Tries times; no worker dies;
// no good job is lost or runs twice.
func TestPoisonMix(t *testing.T) {
	jobs := harness.Scale(3000, 20_000)
	const tries = 3
	b := setup(t)
	poison := map[string]string{} // ID -> why
	var panics []string
	kinds := []string{"truncated envelope", "garbage envelope", "foreign payload", "body that does not decode", "unknown name", "panic"}
	for i := range jobs {
		task := faultworker.Task{Millis: i % 5}
		kind := ""
		if i%100 < 3 {
			kind = kinds[(i/100*3+i%100)%len(kinds)]
		}
		switch kind {
		case "panic":
			task = faultworker.Task{Kind: faultworker.KindPanic, Opts: runtime.JobOptions{Tries: tries}}
		case "unknown name", "body that does not decode":
			env := &runtime.Envelope{Name: faultworker.TaskName, Queue: queue, Body: []byte{0xc1, 0xc1}}
			if kind == "unknown name" {
				env.Name, env.Body = "faults.Unknown", nil
			}
			require.NoError(t, b.engine.Push(b.ctx, env))
			poison[env.ID] = kind
			continue
		}
		ids, err := b.disp.Push(b.ctx, task)
		require.NoError(t, err)
		switch kind {
		case "panic":
			poison[ids[0]] = kind
			panics = append(panics, ids[0])
		case "":
		default:
			corrupt(t, b, ids[0], kind)
			poison[ids[0]] = kind
		}
	}
	acked := b.disp.Acked()
	for id := range poison {
		acked[id] = -1
	}

	f := b.fleet(t, func(c *faultworker.Config) { c.Tries = 20 })
	f.Start(3)
	harness.Drain(t, b.engine, queue, 2*time.Minute)
	f.StopAll(15 * time.Second)

	o, err := harness.Check(b.ctx, b.engine, queue, acked, f.Records())
	require.NoError(t, err)
	t.Logf("outcome: %v", o)
	harness.RequireClean(t, o)
	failed, err := harness.FailedIDs(b.ctx, b.engine, queue)
	require.NoError(t, err)
	require.ElementsMatch(t, slices.Collect(maps.Keys(poison)), slices.Collect(maps.Keys(failed)), "the failed store holds exactly the poison jobs")
	runs := harness.GroupRuns(f.Records())
	for _, id := range panics {
		var attempts []int
		if j := runs[id]; j != nil {
			for _, s := range j.Starts {
				attempts = append(attempts, s.Attempt)
			}
		}
		slices.Sort(attempts)
		require.Equal(t, []int{1, 2, 3}, attempts, "panicking job %s is attempted exactly %d times", id, tries)
		fj, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, queue, id)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, tries, fj.Attempts)
		require.Contains(t, fj.Error, "panic")
	}
	require.Zero(t, o.Duplicates)
	require.Empty(t, f.Deaths(), "no worker dies")
	byKind := map[string]int{}
	for _, k := range poison {
		byKind[k]++
	}
	t.Logf("figures: %d jobs, poison %v; failed store %d (exactly the poison), panicking jobs attempted %d times each, worker deaths %d, good jobs lost %d",
		jobs, byKind, len(failed), tries, len(f.Deaths()), len(o.Lost))
}

// corrupt overwrites the payload of pushed job id in Redis.
func corrupt(t *testing.T, b bundle, id, how string) {
	t.Helper()
	k := harness.Keys("faults", queue)
	rdb := b.engine.Client()
	p, err := rdb.HGet(b.ctx, k.Payloads, id).Bytes()
	require.NoError(t, err)
	switch how {
	case "truncated envelope":
		p = p[:len(p)/2]
	case "garbage envelope":
		p = []byte{0xde, 0xad, 0xbe, 0xef, 0x00, 0xc1}
	case "foreign payload":
		p = []byte(fmt.Sprintf(`{"uuid":%q,"displayName":"App\\Jobs\\SendEmail","job":"Illuminate\\Queue\\CallQueuedHandler@call"}`, id))
	}
	require.NoError(t, rdb.HSet(b.ctx, k.Payloads, id, p).Err())
}
