package runtime_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/runtime"
)

// The runtime histograms of ten-minute slots that ended are read once:
// a slot past its end is no longer written to. The open slot is read
// each time.
func TestJobMetricsReadsEndedSlotsOnce(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		k := keyspace.New(b.prefix)
		slot := time.Now().UnixMilli() / (10 * time.Minute).Milliseconds()
		ended, open := k.Runtimes("q", slot-10), k.Runtimes("q", slot)
		require.NoError(t, b.rdb.HSet(b.ctx, ended, "app.Job|10", 3).Err())
		require.NoError(t, b.rdb.HSet(b.ctx, open, "app.Job|10", 2).Err())
		jobs := func() (hour, day int64) {
			ms, err := runtime.NewInspector(b.engine).JobMetrics(b.ctx, "q")
			require.NoError(t, err)
			require.Len(t, ms, 1)
			return ms[0].Hour.Jobs, ms[0].Day.Jobs
		}
		hour, day := jobs()
		require.Equal(t, []int64{2, 5}, []int64{hour, day})

		require.NoError(t, b.rdb.HIncrBy(b.ctx, open, "app.Job|10", 1).Err())
		require.NoError(t, b.rdb.HIncrBy(b.ctx, ended, "app.Job|10", 100).Err()) // not read again
		hour, day = jobs()
		require.Equal(t, []int64{3, 6}, []int64{hour, day})
	})
}

// The per-minute counts of hours that ended are read once too.
func TestMetricsReadsEndedHoursOnce(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		k := keyspace.New(b.prefix)
		now := time.Now()
		hour := now.Unix() / 3600
		old := now.Add(-3*time.Hour).Unix() / 60
		require.NoError(t, b.rdb.HSet(b.ctx, k.Metrics(hour-3), fmt.Sprintf("%d|processed|q", old), 5).Err())
		require.NoError(t, b.rdb.HSet(b.ctx, k.Metrics(hour), fmt.Sprintf("%d|processed|q", now.Unix()/60), 1).Err())
		processed := func() int64 {
			counts, err := runtime.NewInspector(b.engine).Metrics(b.ctx, now.Add(-24*time.Hour))
			require.NoError(t, err)
			var n int64
			for _, c := range counts {
				n += c.Processed
			}
			return n
		}
		require.EqualValues(t, 6, processed())
		require.NoError(t, b.rdb.HIncrBy(b.ctx, k.Metrics(hour), fmt.Sprintf("%d|processed|q", now.Unix()/60), 1).Err())
		require.NoError(t, b.rdb.HIncrBy(b.ctx, k.Metrics(hour-3), fmt.Sprintf("%d|processed|q", old), 100).Err())
		require.EqualValues(t, 7, processed())
	})
}

// States counts the ready jobs that wait in groups; OldestGrouped finds
// the oldest head whether it reads the wait set whole (up to 1,000
// jobs) or each group's head.
func TestGroupedCountAndOldestHead(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var first []*runtime.Envelope
		for g := range 5 {
			first = append(first, grouped("fair", fmt.Sprintf("g%d", g), 0, "x"))
		}
		pushAll(t, b, first...)
		time.Sleep(5 * time.Millisecond) // the later jobs' IDs are of a later millisecond
		pushAll(t, b, env("fair", "app.Job", "plain"))
		ins := runtime.NewInspector(b.engine)
		st, err := ins.States(b.ctx, []string{"fair"})
		require.NoError(t, err)
		require.Equal(t, runtime.QueueState{Sizes: runtime.Sizes{Ready: 6}, Grouped: 5}, st["fair"])
		at, ok, err := ins.OldestGrouped(b.ctx, "fair")
		require.NoError(t, err)
		require.True(t, ok)

		var more []*runtime.Envelope
		for i := range 1000 {
			more = append(more, grouped("fair", fmt.Sprintf("g%d", i%5), 0, "x"))
		}
		pushAll(t, b, more...)
		st, err = ins.States(b.ctx, []string{"fair"})
		require.NoError(t, err)
		require.EqualValues(t, 1005, st["fair"].Grouped)
		again, ok, err := ins.OldestGrouped(b.ctx, "fair")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, at, again, "each group's head is one of the first five")
		w, err := ins.OldestGroupedWait(b.ctx, "fair")
		require.NoError(t, err)
		require.Equal(t, runtime.GroupedWait{At: at, OK: true}, w, "every group has its head among the first 1,000 jobs")
	})
}

// Past 1,000 jobs waiting in groups, OldestGroupedWait reads the heads of
// the groups among the first 1,000 only, in the same two commands, and
// says so: here the oldest job is in the group that sorts last, which it
// does not read, and the wait it gives is a bound.
func TestOldestGroupedPastAThousandJobs(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		oldest := grouped("fair", "g249", 0, "x")
		pushAll(t, b, oldest)
		time.Sleep(5 * time.Millisecond) // the later jobs' IDs are of a later millisecond
		var more []*runtime.Envelope
		for i := range 250 * 6 {
			if g := i % 250; g != 249 {
				more = append(more, grouped("fair", fmt.Sprintf("g%03d", g), 0, "x"))
			}
		}
		ins := runtime.NewInspector(b.engine)
		pushAll(t, b, more[:900]...)
		w, err := ins.OldestGroupedWait(b.ctx, "fair")
		require.NoError(t, err)
		require.Equal(t, runtime.GroupedWait{At: time.UnixMilli(oldest.DispatchedAt), OK: true}, w, "901 jobs: every head is read")

		pushAll(t, b, more[900:]...)
		st, err := ins.States(b.ctx, []string{"fair"})
		require.NoError(t, err)
		require.EqualValues(t, 1495, st["fair"].Grouped)
		w, err = ins.OldestGroupedWait(b.ctx, "fair")
		require.NoError(t, err)
		require.True(t, w.OK)
		require.True(t, w.Partial, "g249 sorts after the first 1,000 jobs")
		require.True(t, w.At.After(time.UnixMilli(oldest.DispatchedAt)), "its head is not read")
		at, ok, err := ins.OldestGrouped(b.ctx, "fair")
		require.NoError(t, err)
		require.Equal(t, w.At, at)
		require.True(t, ok)
	})
}
