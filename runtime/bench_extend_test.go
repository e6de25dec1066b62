package runtime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// BenchmarkExtend100 is a worker's heartbeat of 100 running jobs: one
// extend of their leases. One op is one extend of 100 jobs.
func BenchmarkExtend100(b *testing.B) {
	ctx, e := benchEngine(b)
	prePush(b, ctx, e, 100)
	batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
	require.NoError(b, err)
	require.Len(b, batch.Jobs, 100)
	refs := make([]runtime.Ref, len(batch.Jobs))
	for k, j := range batch.Jobs {
		refs[k] = j.Ref
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		lost, err := runtime.NewBroker(e).Extend(ctx, time.Hour, refs...)
		if err != nil || len(lost) > 0 {
			b.Fatal(err, lost)
		}
	}
}
