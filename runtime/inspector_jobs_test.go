package runtime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestListAndFindJobs(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var ready []string
		for range 5 {
			e := env("q", "test.Job", "r")
			require.NoError(t, b.engine.Push(b.ctx, e))
			ready = append(ready, e.ID)
		}
		late := env("q", "test.Job", "d")
		require.NoError(t, b.engine.Later(b.ctx, late, time.Hour))

		page, total, err := runtime.NewInspector(b.engine).ListJobs(b.ctx, "q", runtime.StateReady, 1, 2)
		require.NoError(t, err)
		require.Equal(t, int64(5), total)
		require.Len(t, page, 2)
		require.Equal(t, ready[1], page[0].ID)
		require.Equal(t, ready[2], page[1].ID)
		got, err := runtime.DecodeEnvelope("q", page[0].ID, page[0].Payload)
		require.NoError(t, err)
		require.Equal(t, "test.Job", got.Name)

		delayed, total, err := runtime.NewInspector(b.engine).ListJobs(b.ctx, "q", runtime.StateDelayed, 0, 10)
		require.NoError(t, err)
		require.Equal(t, int64(1), total)
		require.Equal(t, late.ID, delayed[0].ID)
		require.True(t, delayed[0].Due.After(time.Now().Add(50*time.Minute)))

		at, ok, err := runtime.NewInspector(b.engine).OldestReady(b.ctx, "q")
		require.NoError(t, err)
		require.True(t, ok)
		require.WithinDuration(t, time.Now(), at, time.Minute)

		res := mustReserve(t, b, "q", 1)
		j, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "q", res.Jobs[0].ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, runtime.StateReserved, j.State)
		require.Equal(t, 1, j.Attempts)

		j, ok, err = runtime.NewInspector(b.engine).FindJob(b.ctx, "q", late.ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, runtime.StateDelayed, j.State)

		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: res.Jobs[0].Ref, Name: "test.Job", Err: errors.New("boom"), Attempts: 1}))
		j, ok, err = runtime.NewInspector(b.engine).FindJob(b.ctx, "q", res.Jobs[0].ID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, runtime.StateFailed, j.State)

		_, ok, err = runtime.NewInspector(b.engine).FindJob(b.ctx, "q", "nope")
		require.NoError(t, err)
		require.False(t, ok)
	})
}
