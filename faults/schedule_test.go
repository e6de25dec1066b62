package faults_test

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestScheduleKill9 runs three schedule processes on the Redis clock and
// kills one of them with SIGKILL at random moments, starting a new one in
// its place, and now and then kills all three before starting them
// again. Every tick of every entry is dispatched exactly once; while any
// process ran, none is missing; after all were down, the entries (with
// CatchUp 5) dispatch the ticks missed, at most five.
func TestScheduleKill9(t *testing.T) {
	t.Parallel()
	run := harness.Scale(8*time.Second, 90*time.Second)
	b := setup(t)
	specs := []string{"* * * * * *", "*/2 * * * * *", "@every 3s"}
	f := b.fleet(t, func(c *faultworker.Config) {
		c.Schedule, c.CatchUp = specs, 5
	})
	f.Start(3)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var kills, blackouts int
	end := time.Now().Add(run)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(200+rng.IntN(900)) * time.Millisecond)
		if rng.IntN(6) == 0 {
			// Every process down for a while: the missed ticks come back,
			// at most five per entry.
			for slot := range 3 {
				f.Kill(slot)
			}
			time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
			for slot := range 3 {
				f.Replace(slot)
			}
			kills += 3
			blackouts++
			continue
		}
		slot := rng.IntN(3)
		f.Kill(slot)
		f.Replace(slot)
		kills++
	}
	f.StopAll(10 * time.Second)
	require.Empty(t, f.Deaths(), "no schedule process died but those killed")

	// Count the jobs in the queue by entry and tick.
	payloads, err := b.engine.Client().HGetAll(b.ctx, harness.Keys("faults", queue).Payloads).Result()
	require.NoError(t, err)
	ticks := map[string][]int64{}
	dispatches := map[string]int{}
	for id, p := range payloads {
		env, err := runtime.DecodeEnvelope(queue, id, []byte(p))
		require.NoError(t, err)
		var entry string
		var tick int64
		for _, tag := range env.Tags {
			if v, ok := strings.CutPrefix(tag, "schedule:"); ok {
				entry = v
			}
			if v, ok := strings.CutPrefix(tag, "tick:"); ok {
				tick, err = strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
			}
		}
		require.NotEmpty(t, entry, "job %s has no schedule tag", id)
		key := entry + "@" + strconv.FormatInt(tick, 10)
		dispatches[key]++
		if dispatches[key] == 1 {
			ticks[entry] = append(ticks[entry], tick)
		}
	}
	for key, n := range dispatches {
		require.Equal(t, 1, n, "tick %s dispatched %d times", key, n)
	}

	// No gap but those the blackouts allow: consecutive dispatched ticks
	// of an entry are at most CatchUp+1 ticks apart after a blackout, and
	// one tick apart otherwise.
	s := faultworker.ScheduleOf(specs, queue, 5)
	entries, err := s.Entries()
	require.NoError(t, err)
	var gaps int
	for _, e := range entries {
		got := ticks[e.EntryName()]
		require.NotEmpty(t, got, e.EntryName())
		slices.Sort(got)
		for i := 1; i < len(got); i++ {
			prev, next := time.UnixMilli(got[i-1]), time.UnixMilli(got[i])
			if !e.Next(prev).Equal(next) {
				gaps++
			}
		}
	}
	t.Logf("figures: %d s, %d kills, %d blackouts, %d jobs dispatched, %d gaps", int(run.Seconds()), kills, blackouts, len(dispatches), gaps)
	require.LessOrEqual(t, gaps, blackouts*len(entries), "ticks missing only after every process was down")
}
