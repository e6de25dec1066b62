package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
)

// --queue critical:6,default:3,low:1 gives the queues weights; names with
// colons that are not all weights stand as they are.
func TestWorkQueueWeights(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	b.push(t, "critical", greet{"a"})
	b.push(t, "low", greet{"b"})
	code, stdout, stderr := b.run(t, "queue:work", "--queue", "critical:6,default:3,low:1", "--stop-when-empty", "--name", "w1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "Worker w1 processing queues critical, default, low")
	require.Contains(t, stdout, "2 done")

	b.push(t, "mail:high", greet{"c"})
	code, stdout, stderr = b.run(t, "queue:work", "--queue", "mail:high", "--stop-when-empty", "--name", "w2")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "Worker w2 processing queues mail:high")
	require.Contains(t, stdout, "1 done")
}
