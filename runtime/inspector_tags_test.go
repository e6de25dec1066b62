package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

func tagOpts(queue string, tags ...string) runtime.JobOptions {
	return runtime.JobOptions{Queue: queue, Tags: tags, Tries: 1}
}

func tagIDs(t *testing.T, ins *runtime.Inspector, ctx context.Context, tag string, queues ...string) map[string]runtime.TagState {
	t.Helper()
	got, err := ins.TagJobs(ctx, tag, queues, runtime.MaxTagJobs)
	require.NoError(t, err)
	out := map[string]runtime.TagState{}
	for k, j := range got {
		out[j.ID] = j.State
		if k > 0 {
			require.False(t, j.PushedAt.After(got[k-1].PushedAt), "newest first")
		}
	}
	return out
}

// A monitored tag records the jobs pushed with it, on every queue, a
// queue first pushed to after the tag was added too, through Dispatch
// and DispatchMany; the tag's jobs are read with where each is now; a
// job pushed before, or without the tag, is not recorded; removing the
// tag drops its records.
func TestMonitoredTagRecordsItsJobs(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"tq": {}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			if j.N < 0 {
				return errors.New("fails")
			}
			return nil
		})
		ins := runtime.NewInspector(b.engine)
		before := b.dispatch(t, job(1, tagOpts("tq", "acme")))
		require.NoError(t, ins.MonitorTag(b.ctx, "acme"))
		require.NoError(t, ins.MonitorTag(b.ctx, "acme"))
		tags, err := ins.MonitoredTags(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"acme"}, tags)

		ids := b.dispatch(t,
			job(2, tagOpts("tq", "other", "acme")), // recorded
			job(-3, tagOpts("tq", "acme")),         // recorded, fails
			job(4, tagOpts("tq")),                  // no tags
			job(5, tagOpts("tq", "other")),         // a tag not monitored
			job(6, tagOpts("tq2", "acme")),         // a queue new since the tag was added
		)
		many, err := runtime.DispatchMany(b.ctx, []testJob{job(7, tagOpts("tq", "acme")), job(8, tagOpts("tq")), job(9, tagOpts("tq", "x", "acme"))})
		require.NoError(t, err)

		got := tagIDs(t, ins, b.ctx, "acme", "tq", "tq2")
		want := map[string]runtime.TagState{ids[0]: runtime.TagPending, ids[1]: runtime.TagPending, ids[4]: runtime.TagPending,
			many[0]: runtime.TagPending, many[2]: runtime.TagPending}
		require.Equal(t, want, got)
		require.NotContains(t, got, before[0])
		require.Empty(t, tagIDs(t, ins, b.ctx, "other", "tq", "tq2"))

		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"tq", "tq2"}, StopWhenEmpty: true})
		got = tagIDs(t, ins, b.ctx, "acme", "tq", "tq2")
		want = map[string]runtime.TagState{ids[0]: runtime.TagCompleted, ids[1]: runtime.TagFailed,
			ids[4]:  runtime.TagGone, // tq2 keeps no record of finished jobs
			many[0]: runtime.TagCompleted, many[2]: runtime.TagCompleted}
		require.Equal(t, want, got)

		// the limit, and the newest first
		one, err := ins.TagJobs(b.ctx, "acme", []string{"tq", "tq2"}, 1)
		require.NoError(t, err)
		require.Len(t, one, 1)

		require.NoError(t, ins.UnmonitorTag(b.ctx, "acme"))
		tags, err = ins.MonitoredTags(b.ctx)
		require.NoError(t, err)
		require.Empty(t, tags)
		require.Empty(t, tagIDs(t, ins, b.ctx, "acme", "tq", "tq2"))
		b.dispatch(t, job(10, tagOpts("tq", "acme")))
		require.Empty(t, tagIDs(t, ins, b.ctx, "acme", "tq", "tq2"))

		require.ErrorIs(t, ins.MonitorTag(b.ctx, ""), runtime.ErrInvalid)
		_, err = ins.TagJobs(b.ctx, "acme", []string{"bad{"}, 10)
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}

// A tag's set keeps its newest MaxTagJobs jobs.
func TestMonitoredTagKeepsABound(t *testing.T) {
	forEachFinishedBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle) {
		ins := runtime.NewInspector(b.engine)
		b.dispatch(t, job(0, tagOpts("bound")))
		require.NoError(t, ins.MonitorTag(b.ctx, "t"))
		jobs := make([]testJob, runtime.MaxTagJobs+20)
		for i := range jobs {
			jobs[i] = job(i, tagOpts("bound", "t"))
		}
		ids, err := runtime.DispatchMany(b.ctx, jobs)
		require.NoError(t, err)
		got := tagIDs(t, ins, b.ctx, "t", "bound")
		require.Len(t, got, runtime.MaxTagJobs)
		kept := 0
		for _, id := range ids {
			if _, ok := got[id]; ok {
				kept++
			}
		}
		require.Equal(t, runtime.MaxTagJobs, kept)
	})
}

// A monitored tag records the jobs of a chain's later links, of the
// schedule and of a debounce too: every path into a queue that goes
// through the enqueue step with the job's envelope.
func TestMonitoredTagOnOtherPaths(t *testing.T) {
	forEachFinishedBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		ins := runtime.NewInspector(b.engine)
		require.NoError(t, ins.MonitorTag(b.ctx, "acme"))

		// a chain: its second link is pushed by the worker
		_, err := runtime.Chain(job(1, tagOpts("tp")), job(2, tagOpts("tp", "acme"))).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"tp"}, StopWhenEmpty: true})
		got := tagIDs(t, ins, b.ctx, "acme", "tp")
		require.Len(t, got, 1, "the chain's second link")

		// the schedule
		s := schedule.New()
		s.Job(job(3, tagOpts("tp", "acme"))).Name("tagged")
		reports, err := s.RunDue(b.ctx, b.engine, schedule.Config{Clock: compClock{time.Now().UTC().Truncate(time.Minute)}, Logger: quiet})
		require.NoError(t, err)
		require.Len(t, reports, 1)
		require.NoError(t, reports[0].Err)
		got = tagIDs(t, ins, b.ctx, "acme", "tp")
		require.Contains(t, got, reports[0].JobID)
		require.Equal(t, runtime.TagPending, got[reports[0].JobID])

		// a debounce
		id, err := runtime.Dispatch(b.ctx, dbJob{Key: "k", opts: runtime.JobOptions{Queue: "tp", Tags: []string{"acme"}, Debounce: time.Minute}})
		require.NoError(t, err)
		got = tagIDs(t, ins, b.ctx, "acme", "tp")
		require.Len(t, got, 3)
		require.Equal(t, runtime.TagPending, got[id])
	})
}
