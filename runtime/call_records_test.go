package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// The records of retried calls (EngineConfig.RetryWindow) are a few
// hashes per queue, however many calls: at most window/span + 2 at a
// time, 14 with the default window. A hash per 10 ms made them 74 of the
// 104 keys of Redis after 3,000 dispatches.
func TestCallRecordsAreFewKeysPerQueue(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const dispatches = 3000
		queues := []string{"a", "b"}
		start := time.Now()
		for i := range dispatches {
			_, err := b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(job(i, runtime.JobOptions{})).OnQueue(queues[i%2]))
			require.NoError(t, err)
		}
		took := time.Since(start)
		perQueue := map[string]int{}
		for _, k := range keysMatching(t, b, b.prefix+":calls:*") { // every node of a cluster
			perQueue[k[strings.Index(k, "{")+1:strings.Index(k, "}")]]++
		}
		require.Len(t, perQueue, 2, "each queue's pushes are recorded")
		// A span is 5 s: the dispatches took `took`, so they fall in at
		// most took/5s + 2 hashes per queue, and never more than 14.
		bound := min(int(took/(5*time.Second))+2, 14)
		for q, n := range perQueue {
			require.LessOrEqual(t, n, bound, "call-record keys of queue %s after %d dispatches in %v", q, dispatches/2, took)
		}
	})
}
