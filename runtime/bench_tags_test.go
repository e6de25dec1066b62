package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// BenchmarkPushTagged pushes one job with two tags per call, with no tag
// monitored and with one of them monitored (its push then records the
// job in the tag's set): one op is one job. BenchmarkPush is the same
// push without tags.
func BenchmarkPushTagged(b *testing.B) {
	for _, monitored := range []bool{false, true} {
		name := "unmonitored"
		if monitored {
			name = "monitored"
		}
		b.Run(name, func(b *testing.B) {
			ctx, e := benchEngine(b)
			if monitored {
				require.NoError(b, runtime.NewInspector(e).MonitorTag(ctx, "customer:42"))
			}
			tags := []string{"customer:42", "region:eu"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				env := benchEnv()
				env.Tags = tags
				if err := e.Push(ctx, env); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportJobsPerSecond(b, b.N)
		})
	}
}
