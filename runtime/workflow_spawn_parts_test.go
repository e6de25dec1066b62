package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// The jobs of the spawned fan-outs below, all on one queue, so that their
// workflow lives in its slot and the spawner's ack releases its children.

type wfFan struct {
	First, Then int // children spawned by the first attempt, which fails, and by the next
}

func (wfFan) JobName() string                { return "wf.Fan" }
func (wfFan) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "fan", Tries: 2} }
func (j wfFan) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfLeaf struct{ I int }

func (wfLeaf) JobName() string                { return "wf.Leaf" }
func (wfLeaf) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "fan"} }
func (j wfLeaf) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// A spawner of more than 1,000 children releases them in parts, as a
// static fan-out does. The children its failed first attempt spawned and
// its second did not are dropped, part by part: none runs, the workflow
// counts them out, and it succeeds once the rest have.
func TestWorkflowSpawnedFanOutReleasedInParts(t *testing.T) {
	for _, c := range []struct {
		name        string
		first, then int
		parts       int  // step_release calls: the ack releases the first 1,000
		dies        bool // the first part's call is lost, as if its worker died before it was sent
	}{
		{"every child kept", 2500, 2500, 2, false},
		{"the last 100 dropped", 2500, 2400, 2, false},
		{"most dropped", 2500, 500, 2, false},
		{"the last 100 dropped, the worker dies between parts", 2500, 2400, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				var mu sync.Mutex
				ran := map[int]int{}
				attempts := 0
				runtime.Register(b.router, "wf.Fan", func(ctx context.Context, j wfFan) error {
					mu.Lock()
					attempts++
					first := attempts == 1
					mu.Unlock()
					n := j.Then
					if first {
						n = j.First
					}
					leaves := make([]wfLeaf, n)
					for i := range leaves {
						leaves[i] = wfLeaf{I: i}
					}
					if _, err := runtime.SpawnMany(ctx, leaves); err != nil {
						return err
					}
					if first {
						return errors.New("the first attempt fails after spawning")
					}
					return nil
				})
				runtime.Register(b.router, "wf.Leaf", func(ctx context.Context, j wfLeaf) error {
					mu.Lock()
					ran[j.I]++
					mu.Unlock()
					return nil
				})
				drop := &dropScripts{shas: map[string]bool{runtime.ScriptSHA("step_release"): true}, most: 1}
				if c.dies {
					b.rdb.AddHook(drop)
				}
				calls := countScripts(b, "step_release")
				wf := runtime.NewWorkflow()
				runtime.AddStep(wf, wfFan{First: c.first, Then: c.then})
				id, err := wf.Dispatch(b.ctx)
				require.NoError(t, err)
				calls.take()

				in := runtime.NewInspector(b.engine)
				// (a timeout long enough for SpawnMany of 2,500 on embedded
				// under -race: at one second, the second attempt timed out)
				_, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"fan"}, Concurrency: 20, RetryAfter: 6 * time.Second, Timeout: 5 * time.Second})
				var info *runtime.WorkflowInfo
				if !assert.Eventually(t, func() bool {
					info, err = in.Workflow(b.ctx, id)
					return err == nil && info.State == runtime.WorkflowSucceeded
				}, 90*time.Second, 20*time.Millisecond) {
					counts := map[runtime.StepState]int{}
					for _, s := range info.Steps {
						counts[s.State]++
					}
					mu.Lock()
					t.Fatalf("workflow %v: %+v; steps %v; attempts %d, ran %d; sizes %+v", err, info.State, counts, attempts, len(ran), sizes(t, b.bundle, "fan"))
				}
				require.Eventually(t, func() bool { return sizes(t, b.bundle, "fan") == runtime.Sizes{} }, 10*time.Second, 20*time.Millisecond)
				stop()

				mu.Lock()
				defer mu.Unlock()
				require.Equal(t, 2, attempts)
				require.Len(t, ran, c.then, "only the children of the attempt that succeeded ran")
				for i := range c.then {
					require.Equal(t, 1, ran[i], "child %d", i)
				}
				if c.dies {
					require.Equal(t, 1, drop.dropped(), "a part's call was lost")
					require.GreaterOrEqual(t, calls.take()["step_release"], c.parts, "released in parts, from the mark")
				} else {
					require.Equal(t, c.parts, calls.take()["step_release"], "released in parts")
				}
				info, err = in.Workflow(b.ctx, id)
				require.NoError(t, err)
				require.Len(t, info.Steps, c.then+1, "the dropped children are gone from the workflow")
				for _, s := range info.Steps {
					require.Equal(t, runtime.StepSucceeded, s.State, s.ID)
				}
			})
		})
	}
}
