package runtime_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// TestPushTick drives the schedule's low-level step directly: a tick is
// claimed once, a tick before Since of an entry without state is too
// old, the entry's own lock holds later ticks back while claiming them,
// the job type's unique lock claims nothing, and a zero At pushes
// outside the ticks.
func TestPushTick(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
		tick := func(entry string, j runtime.Job, min int, overlap time.Duration) runtime.TickPush {
			a := at.Add(time.Duration(min) * time.Minute)
			return runtime.TickPush{Entry: entry, Job: runtime.NewPendingDispatch(j), At: a, Next: a.Add(time.Minute), Since: at, Overlap: overlap}
		}

		old := tick("old", job(1, runtime.JobOptions{}), -1, 0)
		res, err := b.engine.PushTick(b.ctx, old)
		require.NoError(t, err)
		require.Equal(t, runtime.ClaimTooOld, res.Claim)

		res, err = b.engine.PushTick(b.ctx, tick("plain", job(1, runtime.JobOptions{}), 0, 0))
		require.NoError(t, err)
		require.Equal(t, runtime.ClaimPushed, res.Claim)
		first := res.JobID
		res, err = b.engine.PushTick(b.ctx, tick("plain", job(1, runtime.JobOptions{}), 0, 0))
		require.NoError(t, err)
		require.Equal(t, runtime.TickResult{Claim: runtime.ClaimTaken, JobID: first}, res, "a tick is claimed once")
		found, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "default", first)
		require.NoError(t, err)
		require.True(t, ok)
		env, err := runtime.DecodeEnvelope(found.Queue, found.ID, found.Payload)
		require.NoError(t, err)
		require.Subset(t, env.Tags, []string{"schedule:plain", "tick:" + strconv.FormatInt(at.UnixMilli(), 10)})

		res, err = b.engine.PushTick(b.ctx, tick("locked", job(2, runtime.JobOptions{}), 0, time.Hour))
		require.NoError(t, err)
		require.Equal(t, runtime.ClaimPushed, res.Claim)
		holder := res.JobID
		res, err = b.engine.PushTick(b.ctx, tick("locked", job(2, runtime.JobOptions{}), 1, time.Hour))
		require.NoError(t, err)
		require.Equal(t, runtime.TickResult{Claim: runtime.ClaimLocked, JobID: holder}, res, "claimed, nothing pushed")
		now := tick("locked", job(2, runtime.JobOptions{}), 0, time.Hour)
		now.At = time.Time{}
		_, err = b.engine.PushTick(b.ctx, now)
		require.ErrorIs(t, err, runtime.ErrDuplicate, "a run now takes the entry's lock too")

		unique := job(3, runtime.JobOptions{UniqueFor: time.Hour})
		res, err = b.engine.PushTick(b.ctx, tick("unique", unique, 0, 0))
		require.NoError(t, err)
		require.Equal(t, runtime.ClaimPushed, res.Claim)
		_, err = b.engine.PushTick(b.ctx, tick("unique", unique, 1, 0))
		var dup *runtime.DuplicateError
		require.ErrorAs(t, err, &dup)
		require.Equal(t, res.JobID, dup.HolderID)

		plainNow := tick("plain", job(1, runtime.JobOptions{}), 0, 0)
		plainNow.At = time.Time{}
		res, err = b.engine.PushTick(b.ctx, plainNow)
		require.NoError(t, err)
		require.Equal(t, runtime.ClaimPushed, res.Claim)
		require.NotEqual(t, first, res.JobID)
		require.EqualValues(t, 4, sizes(t, b, "default").Ready)

		for _, bad := range []runtime.TickPush{{Entry: "x"}, {Job: runtime.NewPendingDispatch(job(1, runtime.JobOptions{}))}, {Entry: "a{b}", Job: runtime.NewPendingDispatch(job(1, runtime.JobOptions{}))}} {
			_, err := b.engine.PushTick(b.ctx, bad)
			require.ErrorIs(t, err, runtime.ErrInvalid)
		}
	})
}

// TestTickPartition picks one partition per entry, the same in every
// engine, and the queue itself when it is not partitioned.
func TestTickPartition(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{Partitions: map[string]int{"p": 4}}, func(t *testing.T, b bundle) {
		require.Equal(t, "default", b.engine.TickPartition("default", "e1"))
		names := runtime.PartitionNames("p", 4)
		seen := map[string]bool{}
		for i := range 20 {
			q := b.engine.TickPartition("p", "entry"+strconv.Itoa(i))
			require.True(t, slices.Contains(names, q), q)
			require.Equal(t, q, b.engine.TickPartition("p", "entry"+strconv.Itoa(i)), "the same each time")
			seen[q] = true
		}
		require.Greater(t, len(seen), 1, "entries spread over the partitions")
	})
}
