package runtime_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// Dispatches one at a time, each a round trip: what a debounced dispatch
// costs beside a plain delayed one, and a plain one (which takes no
// debounce path: one field test).

// BenchmarkDispatch is a plain Dispatch, ready at once.
func BenchmarkDispatch(b *testing.B) {
	ctx, e := benchEngine(b)
	j := testJob{N: 1, opts: runtime.JobOptions{Queue: benchQueue}}
	b.ReportAllocs()
	for b.Loop() {
		_, err := e.Dispatch(ctx, runtime.NewPendingDispatch(j))
		require.NoError(b, err)
	}
}

// BenchmarkDispatchDelayed is a plain Dispatch with a delay (later.lua).
func BenchmarkDispatchDelayed(b *testing.B) {
	ctx, e := benchEngine(b)
	j := testJob{N: 1, opts: runtime.JobOptions{Queue: benchQueue, Delay: time.Minute}}
	b.ReportAllocs()
	for b.Loop() {
		_, err := e.Dispatch(ctx, runtime.NewPendingDispatch(j))
		require.NoError(b, err)
	}
}

// BenchmarkDispatchDebounced is a burst: every dispatch replaces the one
// waiting job's payload and moves its due time (debounce.lua).
func BenchmarkDispatchDebounced(b *testing.B) {
	ctx, e := benchEngine(b)
	j := dbJob{Key: "k", N: 1, opts: runtime.JobOptions{Queue: benchQueue, Debounce: time.Minute, DebounceMaxWait: time.Hour}}
	b.ReportAllocs()
	for b.Loop() {
		_, err := e.Dispatch(ctx, runtime.NewPendingDispatch(j))
		require.NoError(b, err)
	}
}

// BenchmarkDispatchDebouncedNewKeys starts a new burst every dispatch: a
// new job and a new record each.
func BenchmarkDispatchDebouncedNewKeys(b *testing.B) {
	ctx, e := benchEngine(b)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		j := dbJob{Key: strconv.Itoa(i), N: 1, opts: runtime.JobOptions{Queue: benchQueue, Debounce: time.Minute}}
		_, err := e.Dispatch(ctx, runtime.NewPendingDispatch(j))
		require.NoError(b, err)
	}
}
