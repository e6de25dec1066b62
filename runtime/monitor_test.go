package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A running worker is in the registry with the job it runs; once it
// stops it is gone, and the jobs it finished are in the per-minute
// counts.
func TestWorkerRegistryAndMetrics(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		release := make(chan struct{})
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			switch j.Tag {
			case "block":
				<-release
			case "fail":
				return errors.New("no")
			}
			return nil
		})
		blocked, err := runtime.Dispatch(b.ctx, tagged(0, "block", runtime.JobOptions{}))
		require.NoError(t, err)
		for i := range 3 {
			_, err := runtime.Dispatch(b.ctx, tagged(i, "", runtime.JobOptions{}))
			require.NoError(t, err)
		}
		_, err = runtime.Dispatch(b.ctx, tagged(9, "fail", runtime.JobOptions{}))
		require.NoError(t, err)

		_, stop := b.start(t, runtime.WorkerConfig{Name: "w-one", Concurrency: 2, MonitorEvery: 20 * time.Millisecond})
		var ws []runtime.WorkerInfo
		require.Eventually(t, func() bool {
			ws, err = runtime.NewInspector(b.engine).Workers(b.ctx)
			require.NoError(t, err)
			// The record is written every MonitorEvery, the events at once:
			// a record from before the blocked job started may show another.
			return len(ws) == 1 && len(ws[0].Running) == 1 && ws[0].Running[0].ID == blocked &&
				len(b.log.of(runtime.JobFailed)) == 1 && len(b.log.of(runtime.JobProcessed)) == 3
		}, 10*time.Second, 10*time.Millisecond, "the record shows the blocked job alone running, once the others are done")
		w := ws[0]
		require.Equal(t, "w-one", w.Name)
		require.Equal(t, []string{"default"}, w.Queues)
		require.Equal(t, 2, w.Concurrency)
		require.NotZero(t, w.PID)
		require.Equal(t, blocked, w.Running[0].ID)
		require.Equal(t, "test.Job", w.Running[0].Name)

		close(release)
		stop()
		ws, err = runtime.NewInspector(b.engine).Workers(b.ctx)
		require.NoError(t, err)
		require.Empty(t, ws, "a stopped worker removes its record")

		ms, err := runtime.NewInspector(b.engine).Metrics(b.ctx, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		var processed, failed int64
		for _, m := range ms {
			require.Equal(t, "default", m.Queue)
			processed += m.Processed
			failed += m.Failed
		}
		require.Equal(t, int64(4), processed)
		require.Equal(t, int64(1), failed)
	})
}

// A worker with monitoring off writes neither.
func TestWorkerMonitorOff(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		_, err := runtime.Dispatch(b.ctx, job(1, runtime.JobOptions{}))
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true, MonitorEvery: -1})
		ms, err := runtime.NewInspector(b.engine).Metrics(b.ctx, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Empty(t, ms)
		ws, err := runtime.NewInspector(b.engine).Workers(b.ctx)
		require.NoError(t, err)
		require.Empty(t, ws)
	})
}

// A worker killed with -9 drops out of the registry once its lease runs
// out.
func TestKilledWorkerDropsOut(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		c := startChild(t, b, time.Second)
		pid := c.cmd.Process.Pid
		var ws []runtime.WorkerInfo
		var err error
		require.Eventually(t, func() bool {
			ws, err = runtime.NewInspector(b.engine).Workers(b.ctx)
			require.NoError(t, err)
			return len(ws) == 1
		}, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, pid, ws[0].PID)
		require.NoError(t, c.cmd.Process.Kill())
		<-c.exited
		require.Eventually(t, func() bool {
			ws, err = runtime.NewInspector(b.engine).Workers(b.ctx)
			require.NoError(t, err)
			return len(ws) == 0
		}, 10*time.Second, 20*time.Millisecond, "the dead worker's record outlived its lease")
	})
}
