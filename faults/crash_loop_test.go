package faults_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestCrashLoop runs 20 jobs whose handler exits the worker process,
// among good jobs, under a supervisor that restarts workers that die.
// Each crashing job is attempted Tries times and then, on the
// reservation after, moved to the failed store without running; no good
// job is lost.
func TestCrashLoop(t *testing.T) {
	const crashers, tries = 20, 3
	good := harness.Scale(300, 5000)
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) {
		// One job at a time and none prefetched, so that a crash takes
		// down no other job before it starts and every crashing attempt
		// is counted.
		c.Concurrency, c.Prefetch = 1, -1
		c.RetryAfter, c.Timeout = time.Second, 900*time.Millisecond
		c.Tries = 50
	})
	crash := map[string]bool{}
	for i := range good + crashers {
		task := faultworker.Task{}
		if i%((good+crashers)/crashers) == 0 && len(crash) < crashers {
			task = faultworker.Task{Kind: faultworker.KindExit, Opts: runtime.JobOptions{Tries: tries}}
		}
		ids, err := b.disp.Push(b.ctx, task)
		require.NoError(t, err)
		if task.Kind != "" {
			crash[ids[0]] = true
		}
	}
	require.Len(t, crash, crashers)
	f.Supervise()
	f.Start(3)
	harness.Drain(t, b.engine, queue, 2*time.Minute)
	f.StopAll(15 * time.Second)

	o := b.check(t, f)
	failed, err := harness.FailedIDs(b.ctx, b.engine, queue)
	require.NoError(t, err)
	require.ElementsMatch(t, slices.Collect(maps.Keys(crash)), slices.Collect(maps.Keys(failed)), "the failed store holds exactly the crashing jobs")
	runs := harness.GroupRuns(f.Records())
	for id := range crash {
		require.Len(t, runs[id].Starts, tries, "crashing job %s runs exactly Tries times", id)
		fj, ok, err := runtime.NewInspector(b.engine).Failed().Get(b.ctx, queue, id)
		require.NoError(t, err)
		require.True(t, ok)
		require.ErrorContains(t, errString(fj.Error), "did not finish")
	}
	deaths := len(f.Deaths())
	t.Logf("figures: %d crashing jobs x %d tries among %d good: %d worker deaths, failed store %d, good lost %d, duplicates %d",
		crashers, tries, good, deaths, len(failed), len(o.Lost), o.Duplicates)
	require.Equal(t, crashers*tries, deaths, "each crashing attempt kills one worker")
}

type errString string

func (e errString) Error() string { return string(e) }
