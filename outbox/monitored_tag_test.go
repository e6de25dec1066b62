package outbox_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// taggedJob carries tags.
type taggedJob struct{ N int }

func (taggedJob) JobName() string { return "test.Tagged" }
func (taggedJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "mail", Tags: []string{"customer:acme", "region:eu"}}
}
func (j taggedJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// A job dispatched through the outbox is recorded under its monitored
// tags when the relay pushes it, as a Dispatch records it; a tag that is
// not monitored records nothing, and neither does a job without tags.
func TestRelayedJobsAreRecordedUnderMonitoredTags(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		in := runtime.NewInspector(b.engine)
		require.NoError(t, in.MonitorTag(b.ctx, "customer:acme"))
		var tagged string
		b.tx(t, true, func(tx *sql.Tx) {
			id, err := runtime.DispatchTx(b.ctx, tx, taggedJob{N: 1})
			require.NoError(t, err)
			tagged = id
			_, err = runtime.DispatchTx(b.ctx, tx, mailJob{To: "untagged"})
			require.NoError(t, err)
		})
		b.relayAll(t)
		require.Equal(t, int64(2), b.sizes(t, "mail").Ready)

		jobs, err := in.TagJobs(b.ctx, "customer:acme", []string{"mail"}, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, tagged, jobs[0].ID)
		jobs, err = in.TagJobs(b.ctx, "region:eu", []string{"mail"}, 10)
		require.NoError(t, err)
		require.Empty(t, jobs, "a tag nobody monitors records nothing")
	})
}
