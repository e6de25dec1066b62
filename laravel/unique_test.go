package laravel_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// UniqueReport is App\Jobs\UniqueReport, ShouldBeUnique by its reportId.
type UniqueReport struct {
	ReportID int `php:"reportId"`
}

func (UniqueReport) JobName() string { return "test.UniqueReport" }
func (UniqueReport) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{UniqueFor: time.Minute}
}
func (j UniqueReport) EncodeJob() ([]byte, error) { return runtime.Encode(j) }
func (j UniqueReport) UniqueID() string           { return strconv.Itoa(j.ReportID) }

// A ShouldBeUnique job holds its lock in Laravel's Redis cache store,
// whichever side dispatched it, until a worker of either side has run
// it.
func TestUniqueJobsBothWays(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := newMapper()
	laravel.Map[UniqueReport](m, `App\Jobs\UniqueReport`, UniqueReport{}.JobName())
	dispatched := func(id, count string) string {
		out, err := b.command(ctx, "dispatch_unique.php", id, count, "reports").Output()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	lockKey := b.prefix + "laravel_cache:laravel_unique_job:App\\Jobs\\UniqueReport"

	// PHP dispatches three times: one goes, the lock stops the others.
	require.Equal(t, "1", dispatched("5", "3"))
	require.Equal(t, int64(1), b.q.Client().Exists(ctx, lockKey+"5").Val(), "Laravel took the lock")
	var ran atomic.Int32
	rt := newRecorder(0).router()
	runtime.Register(rt, UniqueReport{}.JobName(), func(context.Context, UniqueReport) error { ran.Add(1); return nil })
	w, err := laravel.NewWorker(b.q, m, rt, laravel.WorkerConfig{
		Queues: []string{"reports"}, Sleep: 50 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.Equal(t, int32(1), ran.Load())
	require.Zero(t, b.q.Client().Exists(ctx, lockKey+"5").Val(), "the Go worker released Laravel's lock")
	require.Equal(t, "1", dispatched("5", "1"), "so PHP can dispatch it again")

	// Go dispatches: the second is a duplicate; Laravel's worker runs the
	// first and releases the lock Go took.
	d, err := laravel.NewDispatcher(b.q, m)
	require.NoError(t, err)
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(UniqueReport{ReportID: 9}).OnQueue("fromgo"))
	require.NoError(t, err)
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(UniqueReport{ReportID: 9}).OnQueue("fromgo"))
	var dup *runtime.DuplicateError
	require.ErrorAs(t, err, &dup)
	require.Equal(t, "0", dispatched("9", "1"), "PHP sees the lock Go took")
	b.run(t, ctx, "work.php", "fromgo", "1", "60", "1", "1", "0")
	require.Contains(t, b.results(t, ctx), "ran|UniqueReport|9|1")
	require.Zero(t, b.q.Client().Exists(ctx, lockKey+"9").Val(), "Laravel's worker released Go's lock")
	_, err = dispatch(ctx, d, runtime.NewPendingDispatch(UniqueReport{ReportID: 9}).OnQueue("fromgo"))
	require.NoError(t, err)
}
