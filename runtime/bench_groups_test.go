package runtime_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// benchGroupedDrain pushes 100*b.N jobs over 10 groups (limit per group:
// limit, 0 for none), then reserves and acks them 100 at a time: one op
// is one round of 100. BenchmarkReserveAckBatch100 is the same drain of a
// queue without groups.
func benchGroupedDrain(b *testing.B, limit int) {
	ctx, e := benchEngine(b)
	const chunk = 5000
	out := make([]runtime.Outgoing, 0, chunk)
	for n := 0; n < 100*b.N; {
		out = out[:0]
		for range min(chunk, 100*b.N-n) {
			env := benchEnv()
			env.Headers = map[string]string{runtime.GroupHeader: fmt.Sprint("tenant-", n%10)}
			if limit > 0 {
				env.Headers[runtime.GroupLimitHeader] = strconv.Itoa(limit)
			}
			out = append(out, runtime.Outgoing{Envelope: env})
			n++
		}
		require.NoError(b, e.PushMany(ctx, out))
	}
	refs := make([]runtime.Ref, 0, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		batch, err := runtime.NewBroker(e).Reserve(ctx, benchQueue, 100, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if len(batch.Jobs) != 100 {
			b.Fatalf("reserved %d jobs, want 100", len(batch.Jobs))
		}
		refs = refs[:0]
		for _, j := range batch.Jobs {
			refs = append(refs, j.Ref)
		}
		if err := runtime.NewBroker(e).Ack(ctx, refs...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportJobsPerSecond(b, 100*b.N)
}

// BenchmarkReserveAckBatch100Groups10 drains a queue of 10 fair groups.
func BenchmarkReserveAckBatch100Groups10(b *testing.B) { benchGroupedDrain(b, 0) }

// BenchmarkReserveAckBatch100GroupLimit drains 10 groups with a limit of
// 10 each: every round fills every group's slots, and its ack frees them.
func BenchmarkReserveAckBatch100GroupLimit(b *testing.B) { benchGroupedDrain(b, 10) }
