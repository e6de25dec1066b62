package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestOpenTargetRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, url, want string
	}{
		{"db 0", "redis://" + redisAddr + "/0", "refusing database 0"},
		{"no db", "redis://" + redisAddr, "names no database"},
		{"not a db number", "redis://" + redisAddr + "/x", "names no database"},
		{"another scheme", "redis+cluster://" + redisAddr, "want redis://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenTarget(ctx, tc.url)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestOpenTargetRefusesAForeignDatabase(t *testing.T) {
	ctx := context.Background()
	const db = 10
	c := redis.NewClient(&redis.Options{Addr: redisAddr, DB: db})
	defer c.Close()
	// Only the keys this test writes: never flush a database here.
	require.NoError(t, c.Set(ctx, "someone-elses-key", "1", 0).Err())
	defer c.Del(ctx, "someone-elses-key", ownerKey)
	_, err := OpenTarget(ctx, testURL(db))
	require.ErrorContains(t, err, "did not write")
	v, err := c.Get(ctx, "someone-elses-key").Result()
	require.NoError(t, err)
	require.Equal(t, "1", v, "the foreign key is untouched")
}

func TestTrackerCounts(t *testing.T) {
	tr := newTracker(4)
	for _, seq := range []int64{0, 1, 1, 1, 3, 7} {
		tr.handle(seq, 0)
	}
	dups, missing := tr.counts()
	require.Equal(t, 3, dups, "two extra runs of job 1 and a stray job 7")
	require.Equal(t, 1, missing, "job 2")
	require.False(t, tr.wait(time.Millisecond))
	tr.handle(2, 0)
	require.True(t, tr.wait(time.Second))
	require.False(t, tr.lastRun().IsZero())
}

func TestBinaryJobRoundTrip(t *testing.T) {
	j := Job{Seq: 42, At: 1_700_000_000_123_456_789, Pad: padFor(128)}
	b := appendBinary(nil, j)
	require.Len(t, b, 128)
	seq, at, err := decodeBinaryHeader(b)
	require.NoError(t, err)
	require.Equal(t, j.Seq, seq)
	require.Equal(t, j.At, at)
	_, _, err = decodeBinaryHeader(b[:15])
	require.ErrorIs(t, err, errShort)
}

func TestTableRatios(t *testing.T) {
	recs := []Record{
		{System: "jobgen", Phase: PhaseDrain, JobsPerSec: 100_000, Complete: true},
		{System: "asynq", Phase: PhaseDrain, JobsPerSec: 10_000, Complete: true},
		{System: "taskq", Phase: PhaseDrain, JobsPerSec: 40_000, Complete: false},
		{System: "jobgen", Phase: PhaseLatency, Latency: &Latency{P50: 0.2, P99: 2}, Complete: true},
		{System: "asynq", Phase: PhaseLatency, Latency: &Latency{P50: 1, P99: 1}, Complete: true},
	}
	var b strings.Builder
	require.NoError(t, WriteTable(&b, Config{Systems: []string{"jobgen", "asynq", "taskq"}}, recs))
	out := b.String()
	// The incomplete taskq run is marked and is not the best peer.
	require.Contains(t, out, "| drain | jobs/s | 100,000 (10.0×) | 10,000 (1.00×) | 40,000 (4.00×) ! | ≥ 2.4× best peer | yes |")
	require.Contains(t, out, "| pickup latency p50 | ms | 0.200 (0.20×) | 1.000 (1.00×) | – | ≤ best peer | yes |")
	require.Contains(t, out, "| pickup latency p99 | ms | 2.000 (2.00×) | 1.000 (1.00×) | – | ≤ best peer | no |")
}
