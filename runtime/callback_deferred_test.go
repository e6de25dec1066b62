package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// definedCatch is a callback the test program defines, as an application
// declares its callbacks: in a package variable.
var definedCatch = runtime.NewCallback("test.defined", func(context.Context, string, runtime.Outcome) error { return nil })

func TestMissingCallbacksNamesThoseDefinedAndNotRegistered(t *testing.T) {
	// The example tests define callbacks too: look for this file's.
	mine := func(r *runtime.Router) []string {
		var out []string
		for _, m := range r.MissingCallbacks() {
			if strings.HasPrefix(m, "test.") {
				out = append(out, m)
			}
		}
		return out
	}
	r := runtime.NewRouter()
	missing := mine(r)
	require.Len(t, missing, 1)
	require.Regexp(t, `^test\.defined \(callback_deferred_test\.go:\d+\)$`, missing[0])
	require.ErrorIs(t, r.CheckCallbacks(), runtime.ErrUnknownCallback)
	require.ErrorContains(t, r.CheckCallbacks(), "test.defined")

	// One made at run time, as the tests here make them, is not a
	// definition of the program's.
	_ = runtime.NewCallback("test.made-at-run-time", func(context.Context, string, runtime.Outcome) error { return nil })
	runtime.RegisterCallback(r, definedCatch)
	require.Empty(t, mine(r))
}

// A callback that the worker running it does not have waits in the
// failed store, with the reason, and runs once retried on a worker that
// has it.
func TestUnknownCallbackWaitsInTheFailedStore(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var s steps
		s.register(b.router) // no callback registered
		_, err := runtime.Chain(stepJob{Step: "a", Fail: true}, stepJob{Step: "b"}).Catch((&caught{}).callback("test.late").With("order 7")).Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{StopWhenEmpty: true})

		fs := b.failed(t, "default")
		require.Len(t, fs, 2, "the failed job, and its catch waiting for a worker that has it")
		var run runtime.FailedJob
		for _, f := range fs {
			if f.Name == runtime.CallbackJobName {
				run = f
			}
		}
		require.Equal(t, runtime.CallbackJobName, run.Name)
		require.Contains(t, run.Error, "chain catch callback")
		require.Contains(t, run.Error, `no callback registered: "test.late"`)

		// A deploy registers it; the run is retried.
		var c caught
		r2 := runtime.NewRouter()
		s.register(r2)
		runtime.RegisterCallback(r2, c.callback("test.late"))
		_, err = runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "default", run.ID)
		require.NoError(t, err)
		w, err := runtime.NewWorker(b.engine, r2, runtime.WorkerConfig{StopWhenEmpty: true, Logger: quiet, Sleep: 20 * time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		require.NoError(t, w.Run(ctx))
		require.Equal(t, []string{"order 7: test.Step jobgen: job failed on its only try: step a failed"}, c.list(), "the outcome as the job failed")
		left := b.failed(t, "default")
		require.Len(t, left, 1)
		require.True(t, strings.Contains(left[0].Error, "step a failed"), left[0].Error)
	})
}
