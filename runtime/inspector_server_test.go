package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// Servers reads INFO from the server that holds the keys.
func TestServersReadInfo(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		got := runtime.NewInspector(b.engine).Servers(b.ctx)
		switch b.backend {
		case "embedded":
			require.Len(t, got, 1) // an embedded server may not answer INFO
			return
		case "cluster":
			// every node, masters and replicas
			nodes, err := b.rdb.ClusterNodes(b.ctx).Result()
			require.NoError(t, err)
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
				addr := strings.Fields(line)[1]
				want = append(want, addr[:strings.IndexByte(addr, '@')])
			}
			require.Len(t, got, len(want))
			for _, s := range got {
				require.Contains(t, want, s.Addr)
			}
		default:
			require.Len(t, got, 1)
		}
		for _, s := range got {
			require.NoError(t, s.Err)
			require.NotEmpty(t, s.Fields["redis_version"])
			require.NotEmpty(t, s.Fields["connected_clients"])
			require.NotEmpty(t, s.Fields["maxmemory_policy"])
		}
	})
}

// Result reads a result whole when it is within the limit, and only its
// size when it is over.
func TestResultIsReadWithinALimit(t *testing.T) {
	cfg := runtime.EngineConfig{MaxResultSize: 1 << 20}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.RegisterResult(b.router, "test.Result", func(ctx context.Context, j resultJob) (string, error) {
			return strings.Repeat("r", j.N), nil
		})
		ids := b.dispatch(t, resultJob{N: 10, opts: runtime.JobOptions{Queue: "res"}}, resultJob{N: 5000, opts: runtime.JobOptions{Queue: "res"}})
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"res"}, StopWhenEmpty: true})
		ins := runtime.NewInspector(b.engine)
		small, ok, err := ins.Result(b.ctx, "res", ids[0], 1000)
		require.NoError(t, err)
		require.True(t, ok)
		want, _, err := b.engine.ReadResult(b.ctx, "res", ids[0])
		require.NoError(t, err)
		require.Equal(t, want, small.Encoded)
		require.Equal(t, int64(len(want)), small.Size)

		big, ok, err := ins.Result(b.ctx, "res", ids[1], 1000)
		require.NoError(t, err)
		require.True(t, ok)
		require.Nil(t, big.Encoded, "over the limit: not read")
		require.Greater(t, big.Size, int64(5000))

		_, ok, err = ins.Result(b.ctx, "res", "nope", 1000)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

// JobHistory puts each class's runs in the current ten-minute slot, the
// last of those asked for.
func TestJobHistoryBySlot(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"hist": {}}}
	forEachFinishedBackend(t, cfg, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		runtime.RegisterResult(b.router, "test.Result", func(ctx context.Context, j resultJob) (receipt, error) {
			return receipt{N: j.N}, nil
		})
		for n := range 4 {
			b.dispatch(t, onQueue(n, "hist"))
		}
		b.dispatch(t, resultJob{N: 1, opts: runtime.JobOptions{Queue: "hist"}})
		before := time.Now()
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"hist"}, StopWhenEmpty: true})
		after := time.Now()
		hist, err := runtime.NewInspector(b.engine).JobHistory(b.ctx, "hist", 6)
		require.NoError(t, err)
		require.Len(t, hist, 2)
		require.Equal(t, "test.Job", hist[0].Name)
		require.Equal(t, "test.Result", hist[1].Name)
		for k, want := range []int64{4, 1} {
			h := hist[k]
			require.Len(t, h.Slots, 6)
			last := h.Slots[5]
			if last.Start.After(before) { // the runs crossed into a new slot
				require.Equal(t, want, h.Slots[4].Jobs+last.Jobs)
				continue
			}
			require.Equal(t, want, last.Jobs, h.Name)
			require.False(t, last.Start.After(after))
			require.True(t, last.Start.Add(10*time.Minute).After(before))
			require.Equal(t, 10*time.Minute, h.Slots[5].Start.Sub(h.Slots[4].Start))
			for _, s := range h.Slots[:5] {
				require.Zero(t, s.Jobs)
			}
		}
		_, err = runtime.NewInspector(b.engine).JobHistory(b.ctx, "bad{", 6)
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}
