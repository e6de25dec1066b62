package runtime_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// wfRace is a step of the race tests: it sleeps Millis, then succeeds.
type wfRace struct{ Millis int }

func (wfRace) JobName() string                { return "wf.Race" }
func (wfRace) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j wfRace) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// raceRuns records, per workflow and step, when its handler started and
// whether it ran to success.
type raceRuns struct {
	mu      sync.Mutex
	started map[string][]time.Time // workflow/step -> starts
	done    map[string]int         // workflow/step -> runs to success
}

func (r *raceRuns) register(router *runtime.Router) {
	r.started, r.done = map[string][]time.Time{}, map[string]int{}
	runtime.Register(router, "wf.Race", func(ctx context.Context, j wfRace) error {
		wf, step, _ := runtime.CurrentStep(ctx)
		k := wf + "/" + step
		r.mu.Lock()
		r.started[k] = append(r.started[k], time.Now())
		r.mu.Unlock()
		select {
		case <-time.After(time.Duration(j.Millis) * time.Millisecond):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		r.mu.Lock()
		r.done[k]++
		r.mu.Unlock()
		return nil
	})
}

func (r *raceRuns) of(wf, step string) (starts []time.Time, done int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.started[wf+"/"+step]...), r.done[wf+"/"+step]
}

// Workflows of two steps, the second after the first, are cancelled at
// random moments as their steps run and end. Each ends in one state,
// the one CancelWorkflow reports: cancelled when it returned nil, with
// its catch run once, no step left waiting and no dropped step run;
// succeeded when it returned ErrWorkflowEnded, every step run once to
// success and no catch. A step whose parent ended after the cancel
// never runs (it is dropped, not released).
func TestWorkflowCancelRacesLastStep(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		const n = 150
		var runs raceRuns
		runs.register(b.router)
		var c caught
		cb := c.callback("wf-race")
		runtime.RegisterCallback(b.router, cb)
		_, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"default"}, Concurrency: 16, Sleep: 5 * time.Millisecond})

		in := runtime.NewInspector(b.engine)
		ids := make([]string, n)
		errs := make([]error, n)
		cancelled := make([]time.Time, n) // when CancelWorkflow returned
		var wg sync.WaitGroup
		for i := range n {
			wf := runtime.NewWorkflow().Catch(cb.With(strconv.Itoa(i)))
			a := runtime.AddStep(wf, wfRace{Millis: rand.IntN(4)})
			runtime.AddStep(wf, wfRace{Millis: rand.IntN(4)}, runtime.After(a))
			id, err := wf.Dispatch(b.ctx)
			require.NoError(t, err)
			ids[i] = id
			wg.Go(func() {
				time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
				errs[i] = in.CancelWorkflow(b.ctx, id)
				cancelled[i] = time.Now()
			})
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		}
		wg.Wait()
		// Every workflow has ended: cancelled, or its last step settles
		// soon after. Then the queue empties (catches run as jobs there
		// when the cancelling engine has no registration of theirs).
		require.Eventually(t, func() bool {
			for _, id := range ids {
				info, err := in.Workflow(b.ctx, id)
				if err != nil || info.State == runtime.WorkflowRunning {
					return false
				}
			}
			s, err := in.Sizes(b.ctx, "default")
			return err == nil && s.Ready+s.Reserved+s.Delayed == 0
		}, 20*time.Second, 20*time.Millisecond)
		time.Sleep(100 * time.Millisecond) // a step pushed late would have started by now
		stop()

		catches := map[string]int{}
		for _, call := range c.list() {
			arg, _, _ := strings.Cut(call, ":")
			catches[arg]++
		}
		var ok, cancelledN, releasedThenCancelled, ranAfterCancel int
		for i, id := range ids {
			info, err := in.Workflow(b.ctx, id)
			require.NoError(t, err)
			label := "workflow " + strconv.Itoa(i) + " " + id
			switch info.State {
			case runtime.WorkflowSucceeded:
				ok++
				require.ErrorIs(t, errs[i], runtime.ErrWorkflowEnded, label)
				require.Zero(t, catches[strconv.Itoa(i)], "%s: no catch for a workflow that succeeded", label)
				for _, s := range info.Steps {
					require.Equal(t, runtime.StepSucceeded, s.State, "%s step %s", label, s.ID)
					starts, done := runs.of(id, s.ID)
					require.Len(t, starts, 1, "%s step %s runs once", label, s.ID)
					require.Equal(t, 1, done, "%s step %s runs once to success", label, s.ID)
				}
			case runtime.WorkflowCancelled:
				cancelledN++
				require.NoError(t, errs[i], label)
				require.Equal(t, 1, catches[strconv.Itoa(i)], "%s: its catch runs once", label)
				for _, s := range info.Steps {
					starts, done := runs.of(id, s.ID)
					require.LessOrEqual(t, len(starts), 1, "%s step %s runs at most once", label, s.ID)
					switch s.State {
					case runtime.StepWaiting:
						t.Fatalf("%s step %s waits in a cancelled workflow", label, s.ID)
					case runtime.StepDropped:
						require.Empty(t, starts, "%s step %s was dropped and ran", label, s.ID)
					case runtime.StepSucceeded:
						require.Equal(t, 1, done, "%s step %s succeeded with no run to success", label, s.ID)
					}
					// A released step's job is taken out of its queue, or
					// cancelled as it runs: its handler may have returned
					// nil just as the cancel took its job, and its end is
					// then not recorded (it stays released, or fails).
					if s.ID == "1" && s.State != runtime.StepDropped {
						releasedThenCancelled++
					}
					if len(starts) > 0 && starts[0].After(cancelled[i]) {
						ranAfterCancel++
					}
				}
			default:
				t.Fatalf("%s is %s after the cancel", label, info.State)
			}
		}
		t.Logf("%d workflows: %d succeeded before the cancel, %d cancelled (%d with their last step released before it); steps started after CancelWorkflow returned: %d",
			n, ok, cancelledN, releasedThenCancelled, ranAfterCancel)
		require.NotZero(t, cancelledN, "some cancels came first: make the steps slower")
	})
}

// A cancel that lands after a step's end released its dependent and
// before the worker pushed it: the cancel finds the dependent in no
// queue. The push that follows must not put it in one: once
// CancelWorkflow has returned, no step of the workflow starts.
func TestWorkflowCancelBetweenReleaseAndPush(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var runs raceRuns
		runs.register(b.router)
		in := runtime.NewInspector(b.engine)
		var mu sync.Mutex
		var cancelErr error
		var cancelledAt time.Time
		b.engine.UseDispatch(func(ctx context.Context, out *runtime.DispatchCall, next func(context.Context) error) error {
			if out.Kind == runtime.DispatchKindLink && out.From != nil {
				wf := out.Jobs[0].Envelope.Step.Workflow
				err := in.CancelWorkflow(ctx, wf)
				mu.Lock()
				cancelErr, cancelledAt = err, time.Now()
				mu.Unlock()
			}
			return next(ctx)
		})
		wf := runtime.NewWorkflow()
		a := runtime.AddStep(wf, wfRace{})
		runtime.AddStep(wf, wfRace{}, runtime.After(a))
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"default"}, StopWhenEmpty: true, Concurrency: 1})

		mu.Lock()
		defer mu.Unlock()
		require.NoError(t, cancelErr, "the cancel came while the workflow ran")
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowCancelled, info.State)
		starts, _ := runs.of(id, "1")
		for _, at := range starts {
			require.False(t, at.After(cancelledAt), "step 1 started %v after CancelWorkflow returned", at.Sub(cancelledAt))
		}
		require.Empty(t, starts, "the step released before the cancel and pushed after it does not run")
	})
}

// A workflow whose steps are all released when it is cancelled has no
// waiting step to drop: the cancel ends it all the same (Lua writes the
// count of none dropped as -0, which HINCRBY refuses).
func TestWorkflowCancelAllReleased(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		wf := runtime.NewWorkflow()
		runtime.AddStep(wf, wfRace{})
		runtime.AddStep(wf, wfRace{})
		id, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		in := runtime.NewInspector(b.engine)
		require.NoError(t, in.CancelWorkflow(b.ctx, id))
		info, err := in.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowCancelled, info.State)
		s, err := in.Sizes(b.ctx, "default")
		require.NoError(t, err)
		require.Zero(t, s.Ready, "its released steps are taken out of their queue")
	})
}
