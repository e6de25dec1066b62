package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// greetV2 is version 2 of test.Greet, which the bundle's router knows
// at version 1 only.
type greetV2 struct{ Who string }

func (greetV2) JobName() string                { return "test.Greet" }
func (greetV2) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j greetV2) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }
func (greetV2) JobVersion() int                { return 2 }

// queue:monitor shows the jobs that a worker gave back because it knows
// only an older version of their schema, and with --alert-newer exits 1.
func TestMonitorShowsJobsWaitingForANewerWorker(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	b.push(t, "default", greetV2{"x"})
	out := b.ok(t, "queue:monitor", "--alert-newer")
	require.NotContains(t, out, "newer worker", "no worker has given a job back")

	w, err := runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{Queues: []string{"default"}, Sleep: 20 * time.Millisecond, MonitorEvery: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Eventually(t, func() bool {
		got, err := runtime.NewInspector(b.engine).WaitingForNewer(b.ctx, time.Minute)
		return err == nil && len(got) == 1
	}, 10*time.Second, 20*time.Millisecond)

	code, out, stderr := b.run(t, "queue:monitor", "--alert-newer")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "Queue default: jobs of test.Greet version 2 wait for a newer worker: given back ")
	require.Contains(t, out, "by workers that know up to version 1.")
	require.Contains(t, stderr, "default (jobs of test.Greet version 2 wait for a worker that knows it)")
	out = b.ok(t, "queue:monitor")
	require.Contains(t, out, "wait for a newer worker", "shown without the flag, but no alert")
	cancel()
	require.NoError(t, <-done)
	require.Zero(t, b.sizes(t, "default").Failed, "the job was given back, not failed")
}
