package runtime_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// The ready jobs of a partitioned queue list as one list, page after
// page: every job once, the total of every partition.
func TestListJobsPagesOverPartitions(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{Partitions: map[string]int{"billing": 3}}, func(t *testing.T, b bundle) {
		const n = 23
		for i := range n {
			e := env("billing", "app.Charge", fmt.Sprint("charge ", i))
			require.NoError(t, b.engine.Push(b.ctx, e))
		}
		in := runtime.NewInspector(b.engine)
		seen := map[string]bool{}
		for offset := 0; offset < n+5; offset += 5 {
			jobs, total, err := in.ListJobs(b.ctx, "billing", runtime.StateReady, offset, 5)
			require.NoError(t, err)
			require.Equal(t, int64(n), total)
			require.Len(t, jobs, max(min(5, n-offset), 0), "page at %d", offset)
			for _, j := range jobs {
				require.False(t, seen[j.ID], "job %s listed twice", j.ID)
				seen[j.ID] = true
			}
		}
		require.Len(t, seen, n)
	})
}
