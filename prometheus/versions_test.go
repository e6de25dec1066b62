package jobprom_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// stepV2 is version 2 of test.Step's schema, which the bundle's router
// knows at version 1 only.
type stepV2 struct{ M int }

func (stepV2) JobName() string                { return "test.Step" }
func (stepV2) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (s stepV2) EncodeJob() ([]byte, error)   { return runtime.Encode(s) }
func (stepV2) JobVersion() int                { return 2 }

// TestGivenBackNewer: a job of a newer schema version than the worker
// knows is counted as given back for a newer worker, not as released or
// retried.
func TestGivenBackNewer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *bundle) {
		b.handle(func(ctx context.Context, s step, info runtime.JobInfo) error { return nil })
		_, err := runtime.Dispatch(b.ctx, stepV2{M: 1})
		require.NoError(t, err)
		b.drain(t) // it stops once the job waits, delayed, for a newer worker

		want := `
# HELP jobgen_jobs_given_back_newer_total Jobs a worker gave back, their attempt unused, because their schema version is newer than it knows: they wait for a newer worker (docs/changing-jobs.md).
# TYPE jobgen_jobs_given_back_newer_total counter
jobgen_jobs_given_back_newer_total{job="test.Step",queue="default"} 1
`
		require.NoError(t, testutil.CollectAndCompare(b.m, strings.NewReader(want),
			"jobgen_jobs_given_back_newer_total", "jobgen_jobs_released_total", "jobgen_jobs_retried_total", "jobgen_jobs_failed_total"))
	})
}
