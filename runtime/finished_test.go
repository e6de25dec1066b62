package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func forEachFinishedBackend(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b wbundle)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be, cfg)
			wb := wbundle{bundle: b, router: runtime.NewRouter(), log: &eventLog{}}
			wb.ctx = runtime.WithDispatcher(b.ctx, b.engine)
			fn(t, wb)
		})
	}
}

func finished(t *testing.T, b wbundle, queue string, q runtime.FinishedQuery) ([]runtime.FinishedJob, int64) {
	t.Helper()
	jobs, total, err := runtime.NewInspector(b.engine).FinishedJobs(b.ctx, queue, q)
	require.NoError(t, err)
	return jobs, total
}

func TestFinishedJobsAreKeptWithinTheirCount(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"fin": {MaxJobs: 5}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			return runtime.RecordResult(ctx, j.N)
		})
		var ids []string
		for n := range 8 {
			tag := []string{"even"}
			if n%2 == 1 {
				tag = []string{"odd"}
			}
			// One at a time, so that the record's order is the dispatch's.
			ids = append(ids, b.dispatch(t, job(n, runtime.JobOptions{Queue: "fin", Tags: tag}))...)
			b.runToEnd(t, runtime.WorkerConfig{Name: "w1", Queues: []string{"fin"}, StopWhenEmpty: true})
		}
		// Another queue keeps nothing.
		b.dispatch(t, onQueue(9, "other"))
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"other"}, StopWhenEmpty: true})
		_, total := finished(t, b, "other", runtime.FinishedQuery{})
		require.Zero(t, total)

		jobs, total := finished(t, b, "fin", runtime.FinishedQuery{})
		require.Equal(t, int64(5), total, "bounded by MaxJobs")
		got := make([]string, len(jobs))
		for k, j := range jobs {
			got[k] = j.ID
		}
		require.Equal(t, []string{ids[7], ids[6], ids[5], ids[4], ids[3]}, got, "newest first; the oldest trimmed")
		j := jobs[0]
		require.Equal(t, "test.Job", j.Name)
		require.Equal(t, "fin", j.Queue)
		require.Equal(t, 1, j.Attempts)
		require.Equal(t, "w1", j.Worker)
		require.Equal(t, []string{"odd"}, j.Tags)
		require.Equal(t, 1, j.ResultSize, "msgpack of 7 is one byte")
		require.Positive(t, j.Runtime)
		require.False(t, j.FinishedAt.Before(j.StartedAt.Add(-time.Second)))

		// Search by tag, paged, and by ID.
		odd, _ := finished(t, b, "fin", runtime.FinishedQuery{Tag: "odd"})
		require.Len(t, odd, 3)
		for _, j := range odd {
			require.Equal(t, []string{"odd"}, j.Tags)
		}
		page, _ := finished(t, b, "fin", runtime.FinishedQuery{Tag: "odd", Offset: 1, Limit: 1})
		require.Equal(t, []string{odd[1].ID}, []string{page[0].ID})
		one, _ := finished(t, b, "fin", runtime.FinishedQuery{ID: ids[4]})
		require.Len(t, one, 1)
		require.Equal(t, ids[4], one[0].ID)
		require.Equal(t, []string{"even"}, one[0].Tags)
		gone, _ := finished(t, b, "fin", runtime.FinishedQuery{ID: ids[0]})
		require.Empty(t, gone, "trimmed")
	})
}

func TestFinishedJobsAreKeptWithinTheirAge(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxAge: time.Second}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		b.dispatch(t, onQueue(1, "aged"), onQueue(2, "aged"))
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"aged"}, StopWhenEmpty: true})
		_, total := finished(t, b, "aged", runtime.FinishedQuery{})
		require.Equal(t, int64(2), total)
		time.Sleep(1100 * time.Millisecond) // past MaxAge; the next ack trims
		id := b.dispatch(t, onQueue(3, "aged"))[0]
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"aged"}, StopWhenEmpty: true})
		jobs, total := finished(t, b, "aged", runtime.FinishedQuery{})
		require.Equal(t, int64(1), total, "the two older than MaxAge are trimmed")
		require.Equal(t, id, jobs[0].ID)
	})
}

func TestJobMetricsFromRealRuns(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"timed": {}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		// test.Job takes about 20 ms, test.Result about 100 ms.
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			time.Sleep(20 * time.Millisecond)
			return nil
		})
		runtime.RegisterResult(b.router, "test.Result", func(ctx context.Context, j resultJob) (receipt, error) {
			time.Sleep(100 * time.Millisecond)
			return receipt{N: j.N}, nil
		})
		for n := range 10 {
			b.dispatch(t, onQueue(n, "timed"), resultJob{N: n, opts: runtime.JobOptions{Queue: "timed"}})
		}
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"timed"}, StopWhenEmpty: true, Concurrency: 4})
		ms, err := runtime.NewInspector(b.engine).JobMetrics(b.ctx, "timed")
		require.NoError(t, err)
		require.Len(t, ms, 2)
		fast, slow := ms[0], ms[1]
		require.Equal(t, "test.Job", fast.Name)
		require.Equal(t, "test.Result", slow.Name)
		for _, m := range []runtime.JobClassMetrics{fast, slow} {
			require.Equal(t, int64(10), m.Hour.Jobs, m.Name)
			require.Equal(t, int64(10), m.Day.Jobs, m.Name)
			require.Positive(t, m.Hour.PerMinute)
			require.GreaterOrEqual(t, m.Hour.PerMinute, m.Day.PerMinute, "the same jobs over a longer window")
			require.LessOrEqual(t, m.Hour.P50, m.Hour.P95)
		}
		inRange := func(d, lo, hi time.Duration) {
			require.True(t, d >= lo && d <= hi, fmt.Sprintf("%v not in [%v, %v]", d, lo, hi))
		}
		inRange(fast.Hour.P50, 15*time.Millisecond, 40*time.Millisecond)
		inRange(slow.Hour.P50, 80*time.Millisecond, 160*time.Millisecond)
		inRange(slow.Hour.P95, 80*time.Millisecond, time.Second) // the slowest of ten, on a busy machine
		require.Equal(t, []time.Duration{fast.Hour.P50, fast.Hour.P95}, []time.Duration{fast.Day.P50, fast.Day.P95}, "every run is within the hour")

		// Of a queue of no partitions, its one partition is the queue.
		of, err := runtime.NewInspector(b.engine).JobMetricsOfPartitions(b.ctx, "timed", []string{"timed"})
		require.NoError(t, err)
		require.Len(t, of, 2)
		for k, m := range of { // PerMinute moves with the clock
			require.Equal(t, []any{ms[k].Name, ms[k].Day.Jobs, ms[k].Day.P50, ms[k].Day.P95}, []any{m.Name, m.Day.Jobs, m.Day.P50, m.Day.P95})
		}
		_, err = runtime.NewInspector(b.engine).JobMetricsOfPartitions(b.ctx, "timed", []string{"other"})
		require.ErrorIs(t, err, runtime.ErrInvalid, "a name that is not a partition of the queue")
	})
}

// A job of a group with a limit that finishes with a result and a record
// frees its group's slot and leaves its group, as a plain ack does.
func TestFinishFreesAGroupSlot(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"lim": {}}}
	forEachBackend(t, cfg, func(t *testing.T, b bundle) {
		pushAll(t, b, grouped("lim", "K", 1, "K0"), grouped("lim", "K", 1, "K1"))
		got, jobs := bodies(t, b, "lim", 10)
		require.Equal(t, []string{"K0"}, got)
		none, _ := bodies(t, b, "lim", 10)
		require.Empty(t, none, "K is at its limit")
		require.NoError(t, runtime.NewBroker(b.engine).Finish(b.ctx, runtime.Finish{Ref: jobs[0].Ref, Result: []byte("r"),
			Record: &runtime.FinishedJob{Name: "app.Job", Attempts: 1}}))
		in, err := b.rdb.HExists(b.ctx, b.keys("lim").GroupOf, jobs[0].ID).Result()
		require.NoError(t, err)
		require.False(t, in, "the finished job left its group")
		got, _ = bodies(t, b, "lim", 10)
		require.Equal(t, []string{"K1"}, got, "the finish freed K's slot")
	})
}

// Records older than MaxAge are not listed once they are that old,
// whether or not an ack came to trim them, and the record's keys expire
// MaxAge after the last ack that wrote to them.
func TestFinishedJobsPastTheirAgeLeaveWithoutAnotherAck(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxAge: 3 * time.Second}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		ids := b.dispatch(t, onQueue(1, "aged"), onQueue(2, "aged"))
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"aged"}, StopWhenEmpty: true})
		for _, k := range []string{b.prefix + ":{aged}:finished", b.prefix + ":{aged}:finished:info"} {
			ttl, err := b.rdb.PTTL(b.ctx, k).Result()
			require.NoError(t, err)
			require.True(t, ttl > 0 && ttl <= 3*time.Second, "%s expires within MaxAge: PTTL %v", k, ttl)
		}
		// No ack comes after these two; past MaxAge they are not listed.
		eventually(t, func() bool {
			jobs, total := finished(t, b, "aged", runtime.FinishedQuery{})
			one, _ := finished(t, b, "aged", runtime.FinishedQuery{ID: ids[0]})
			tagged, _ := finished(t, b, "aged", runtime.FinishedQuery{Tag: "x"})
			return total == 0 && len(jobs) == 0 && len(one) == 0 && len(tagged) == 0
		}, "records past MaxAge are not listed")
	})
}
