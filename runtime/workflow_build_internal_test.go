package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime/lua"
)

// The steps of the wide workflows below: a root, children that return
// their N plus the graph's base, and a fan-in handed all their results.

type wfBuildRoot struct{}

func (wfBuildRoot) JobName() string              { return "test.WfBuildRoot" }
func (wfBuildRoot) JobOptions() JobOptions       { return JobOptions{Queue: "wfbuild"} }
func (j wfBuildRoot) EncodeJob() ([]byte, error) { return Encode(j) }

type wfBuildChild struct{ N, Base int }

func (wfBuildChild) JobName() string              { return "test.WfBuildChild" }
func (wfBuildChild) JobOptions() JobOptions       { return JobOptions{Queue: "wfbuild"} }
func (j wfBuildChild) EncodeJob() ([]byte, error) { return Encode(j) }

type wfBuildSum struct{}

func (wfBuildSum) JobName() string { return "test.WfBuildSum" }
func (wfBuildSum) JobOptions() JobOptions {
	return JobOptions{Queue: "wfbuild", Needs: []string{"[]test.WfBuildChild"}}
}
func (j wfBuildSum) EncodeJob() ([]byte, error) { return Encode(j) }

// wfBuildGraph is a root, n children after it, each returning N+base,
// and a fan-in of them: n+2 steps.
func wfBuildGraph(id string, n, base int) *Workflow {
	w := NewWorkflow().WithID(id)
	kids := make([]wfBuildChild, n)
	for i := range kids {
		kids[i] = wfBuildChild{N: i, Base: base}
	}
	children := AddSteps(w, kids, After(AddStep(w, wfBuildRoot{})))
	AddStep(w, wfBuildSum{}, Needs(children.Need()))
	return w
}

// wfBuildRun runs a worker on the test queue until it is empty, and
// returns how many times each child ran (by N+base) and what the fan-in
// was handed.
func wfBuildRun(t *testing.T, ctx context.Context, e *Engine) (map[int]int, [][]int) {
	t.Helper()
	var mu sync.Mutex
	ran, fanIns := map[int]int{}, [][]int{}
	r := NewRouter()
	Register(r, "test.WfBuildRoot", func(context.Context, wfBuildRoot) error { return nil })
	RegisterResult(r, "test.WfBuildChild", func(_ context.Context, j wfBuildChild) (int, error) {
		mu.Lock()
		ran[j.N+j.Base]++
		mu.Unlock()
		return j.N + j.Base, nil
	})
	RegisterStep(r, "test.WfBuildSum", func(_ context.Context, _ wfBuildSum, in []int) error {
		mu.Lock()
		fanIns = append(fanIns, in)
		mu.Unlock()
		return nil
	}, func(in *StepInputs) ([]int, error) { return InputList[int](in, 0) })
	w, err := NewWorker(e, r, WorkerConfig{Queues: []string{"wfbuild"}, Concurrency: 20, StopWhenEmpty: true,
		Sleep: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	// (a bound on a hang: these drains take up to 30 seconds on embedded
	// under -race on a loaded machine)
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	require.NoError(t, w.Run(rctx))
	require.NoError(t, rctx.Err(), "the worker did not stop by itself")
	return ran, fanIns
}

// requireWfBuildRan checks that each of the n children of base ran once,
// and that the fan-in ran once, handed their results in order.
func requireWfBuildRan(t *testing.T, ran map[int]int, fanIns [][]int, n, base int) {
	t.Helper()
	require.Len(t, ran, n)
	want := make([]int, n)
	for i := range want {
		want[i] = i + base
		require.Equal(t, 1, ran[i+base], "child %d", i)
	}
	require.Len(t, fanIns, 1)
	require.Equal(t, want, fanIns[0])
}

// A workflow of more steps than a part holds is stored in parts under
// keys of its own (wf_build), then created from them (wf_create). The
// tests stop a dispatch between the two, as a dispatcher that died there
// would, or spoil what it left.
func TestWorkflowStoredInParts(t *testing.T) {
	const n = 1200 // 1,202 steps: three parts
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, err := Open(ctx, be.URL, EngineConfig{Prefix: redistest.Prefix(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })
			ctx = WithDispatcher(ctx, e)
			rdb := e.store.Client()
			in := NewInspector(e)

			// build stores w's parts as a dispatch would before it creates
			// the workflow, and returns its parts and digest.
			build := func(t *testing.T, w *Workflow) (*workflowPlan, int, string) {
				plan, err := e.planWorkflow(w)
				require.NoError(t, err)
				require.Greater(t, len(plan.steps), jobrdb.WfPartSteps)
				parts, sum, err := e.store.WfBuild(ctx, plan.id, plan.steps, 0)
				require.NoError(t, err)
				require.Equal(t, 3, parts)
				_, err = in.Workflow(ctx, plan.id)
				require.ErrorIs(t, err, ErrNoWorkflow, "the parts stored are no workflow yet")
				return plan, parts, sum
			}
			kidsOf := func(id, step string) int {
				list, err := rdb.HGet(ctx, e.keys.Workflow(id)[3], step).Result()
				require.NoError(t, err)
				return strings.Count(list, ",") + 1
			}

			t.Run("a dispatch that died after storing its parts", func(t *testing.T) {
				plan, _, _ := build(t, wfBuildGraph("wf-died", n, 0))
				// Made again from the same plan, as an outbox relay makes
				// its row again: each part is found stored, and skipped.
				created, rel, err := e.store.WfCreate(ctx, plan.id, plan.policy, 0, time.Hour.Milliseconds(), nil, 0, plan.steps)
				require.NoError(t, err)
				require.True(t, created)
				require.Len(t, rel, 1, "the root is released")
				require.Equal(t, n, kidsOf(plan.id, rel[0].ID), "the root's dependents are listed once")
				require.Zero(t, rdb.Exists(ctx, e.keys.WorkflowBuild(plan.id)...).Val(), "the parts' keys are the workflow's now")
				for _, k := range e.keys.Workflow(plan.id)[:6] {
					require.Equal(t, time.Duration(-1), rdb.PTTL(ctx, k).Val(), "%s expires while the workflow runs", k)
				}
				require.NoError(t, e.pushSteps(ctx, plan.id, rel, nil))
				ran, fanIns := wfBuildRun(t, ctx, e)
				requireWfBuildRan(t, ran, fanIns, n, 0)
				info, err := in.Workflow(ctx, plan.id)
				require.NoError(t, err)
				require.Equal(t, WorkflowSucceeded, info.State)
				require.Len(t, info.Steps, n+2)
			})

			t.Run("a graph left in parts by another dispatch under the same ID", func(t *testing.T) {
				build(t, wfBuildGraph("wf-other", n, 0))
				w := wfBuildGraph("wf-other", n+10, 100_000)
				_, err := w.Dispatch(ctx)
				require.NoError(t, err)
				ran, fanIns := wfBuildRun(t, ctx, e)
				requireWfBuildRan(t, ran, fanIns, n+10, 100_000)
			})

			t.Run("a part lost before the create", func(t *testing.T) {
				plan, parts, sum := build(t, wfBuildGraph("wf-lost", n, 0))
				meta := e.keys.WorkflowBuild(plan.id)[0]
				require.NoError(t, rdb.HSet(ctx, meta, "b", parts-1).Err())
				keys := append(e.keys.Workflow(plan.id), e.keys.WorkflowBuild(plan.id)...)
				_, err := e.store.RunOne(ctx, jobrdb.Call{Script: lua.Get("wf_create"), Keys: keys,
					Args: []any{"f", 0, 60000, "", 0, parts, sum}}).Result()
				require.ErrorContains(t, err, "BUILD workflow: 2 of its 3 parts are stored; nothing was written")
				_, err = in.Workflow(ctx, plan.id)
				require.ErrorIs(t, err, ErrNoWorkflow)
				// Dispatched again, it is stored again, and runs.
				_, err = wfBuildGraph("wf-lost", n, 0).Dispatch(ctx)
				require.NoError(t, err)
				ran, fanIns := wfBuildRun(t, ctx, e)
				requireWfBuildRan(t, ran, fanIns, n, 0)
			})

			t.Run("dispatched again once created", func(t *testing.T) {
				for range 2 {
					id, err := wfBuildGraph("wf-again", n, 0).Dispatch(ctx)
					require.NoError(t, err)
					require.Equal(t, "wf-again", id)
				}
				ran, fanIns := wfBuildRun(t, ctx, e)
				requireWfBuildRan(t, ran, fanIns, n, 0)
			})

			t.Run("a fan-in of more parents than a part names", func(t *testing.T) {
				const wide = 2500 // linked to its parents by two link entries
				plan, err := e.planWorkflow(wfBuildGraph("wf-wide", wide, 0))
				require.NoError(t, err)
				created, rel, err := e.store.WfCreate(ctx, plan.id, plan.policy, 0, time.Hour.Milliseconds(), nil, 0, plan.steps)
				require.NoError(t, err)
				require.True(t, created)
				keys := e.keys.Workflow(plan.id)
				fanIn := plan.steps[len(plan.steps)-1].ID
				require.Equal(t, "2500", rdb.HGet(ctx, keys[2], fanIn).Val(), "the fan-in waits for its 2,500 parents")
				meta := rdb.HMGet(ctx, keys[0], "n", "open").Val()
				require.Equal(t, []any{"2502", "2502"}, meta, "link entries are no steps")
				for _, st := range plan.steps[1 : wide+1] {
					require.Equal(t, fanIn, rdb.HGet(ctx, keys[3], st.ID).Val(), "step %s has the fan-in as its one dependent", st.ID)
				}
				require.NoError(t, e.pushSteps(ctx, plan.id, rel, nil))
				ran, fanIns := wfBuildRun(t, ctx, e)
				requireWfBuildRan(t, ran, fanIns, wide, 0)
			})

			t.Run("a later part naming a parent stored nowhere", func(t *testing.T) {
				steps := make([]jobrdb.WfStep, 1100)
				for i := range steps {
					steps[i] = jobrdb.WfStep{ID: fmt.Sprint("s", i), Job: []byte("job")}
				}
				steps[1000].Needs = "s999"
				steps[1099].Waits = "s5,nope"
				_, _, err := e.store.WfBuild(ctx, "wf-bad", steps, 0)
				require.ErrorContains(t, err, "store part 3 of 3: ERR wf_build: step s1099 waits for nope, which is not a step added before it; nothing was written")
				state := e.keys.WorkflowBuild("wf-bad")[1]
				require.True(t, rdb.HExists(ctx, state, "s999").Val(), "the parts before it are stored")
				require.False(t, rdb.HExists(ctx, state, "s1000").Val(), "the failed part wrote nothing")
				require.Greater(t, rdb.PTTL(ctx, state).Val(), time.Duration(0), "what was stored expires")
			})
		})
	}
}
