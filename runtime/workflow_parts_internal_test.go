package runtime

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime/lua"
)

// A step spawned with a parent whose release is in parts is appended to
// that parent's list of dependents, and counted it ended when spawned
// (wf_spawn): the parts released after stop where the list ended when
// the parent did, and leave the spawned step waiting on its other parents.
func TestWorkflowReleaseInPartsStopsWhereTheListEnded(t *testing.T) {
	eachClient(t, func(t *testing.T, ctx context.Context, _ redistest.Backend, rdb redis.UniversalClient) {
		c := failCase{s: lua.Get("step_release"), kinds: append(append([]string(nil), wfKinds...), "list", "", "hash", "list"),
			// step 0 ended with the one dependent 1, which is still to be
			// released; 0.s, spawned since by step 2 after 0, waits for 2.
			setup: append(wfSetup("s", "w"),
				[]any{"HSET", "K2", "0.s", "w", "2", "q"}, []any{"HSET", "K3", "0.s", 1},
				[]any{"HSET", "K4", "0", "1,0.s", "0>", "1:1:1"}, []any{"HSET", "K1", "open", 3}),
			args: []any{"0", "0"}}
		keys := c.fill(t, ctx, rdb, nil)
		require.NoError(t, c.run(ctx, rdb, keys))
		states, err := rdb.HMGet(ctx, keys[1], "1", "0.s").Result()
		require.NoError(t, err)
		require.Equal(t, []any{"q", "w"}, states, "1 released; 0.s still waits for its spawner")
		left, err := rdb.HGet(ctx, keys[2], "0.s").Result()
		require.NoError(t, err)
		require.Equal(t, "1", left)
		require.Zero(t, rdb.HExists(ctx, keys[3], "0>").Val(), "the release is done")
	})
}

// A workflow that ends (cancelled, failed, past its deadline) drops what
// a release in parts had left, and its mark: a retry counts its steps
// afresh, and a mark left behind would release them a second time.
func TestWorkflowEndDropsTheMarksOfReleasesInParts(t *testing.T) {
	eachClient(t, func(t *testing.T, ctx context.Context, _ redistest.Backend, rdb redis.UniversalClient) {
		c := failCase{s: lua.Get("wf_cancel"), kinds: wfKinds,
			setup: append(wfSetup("s", "w"), []any{"HSET", "K4", "0>", "1:1:1"}),
			args:  []any{"cancel"}}
		keys := c.fill(t, ctx, rdb, nil)
		require.NoError(t, c.run(ctx, rdb, keys))
		require.Zero(t, rdb.HExists(ctx, keys[3], "0>").Val(), "the mark is gone")
		require.Equal(t, "1", rdb.HGet(ctx, keys[3], "0").Val(), "the list of dependents stays")
		require.Equal(t, "x", rdb.HGet(ctx, keys[1], "1").Val(), "the waiting dependent is dropped")
	})
}
