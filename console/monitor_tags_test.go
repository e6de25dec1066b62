package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// queue:monitor-tag adds, lists and removes monitored tags, which the
// pushes then record.
func TestMonitorTagCommand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "mail", greet{Name: "first"})
		require.Equal(t, "Monitoring tag acme.\nMonitoring tag beta.\n", b.ok(t, "queue:monitor-tag", "add", "beta", "acme", "beta"))
		require.Equal(t, "acme\nbeta\n", b.ok(t, "queue:monitor-tag", "list"))

		env := &runtime.Envelope{Name: "test.Greet", Queue: "mail", Body: []byte{0x80}, Tags: []string{"acme"}}
		require.NoError(t, b.engine.Push(b.ctx, env))
		jobs, err := runtime.NewInspector(b.engine).TagJobs(b.ctx, "acme", []string{"mail"}, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, env.ID, jobs[0].ID)

		require.Equal(t, "Stopped monitoring tag acme.\n", b.ok(t, "queue:monitor-tag", "remove", "acme"))
		require.Equal(t, "beta\n", b.ok(t, "queue:monitor-tag", "list"))
		for _, args := range [][]string{{}, {"add"}, {"list", "x"}, {"drop", "x"}} {
			code, _, stderr := b.run(t, append([]string{"queue:monitor-tag"}, args...)...)
			require.Equal(t, 2, code, "%v: %s", args, stderr)
		}
		code, _, stderr := b.run(t, "queue:monitor-tag", "add", "")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "monitored tag")
	})
}
