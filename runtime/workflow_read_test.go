package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/runtime"
)

// summaryPushes records, through dispatch middleware, whether each push
// of wf.Summary carried its inputs or was to read them (EnvelopeStep.Read).
type summaryPushes struct {
	mu     sync.Mutex
	read   []bool
	inputs []int
}

func (p *summaryPushes) use(e *runtime.Engine, also func(env *runtime.Envelope)) {
	e.UseDispatch(func(ctx context.Context, call *runtime.DispatchCall, next func(context.Context) error) error {
		for _, j := range call.Jobs {
			if j.Envelope.Name != "wf.Summary" || j.Envelope.Step == nil {
				continue
			}
			p.mu.Lock()
			p.read = append(p.read, j.Envelope.Step.Read)
			p.inputs = append(p.inputs, len(j.Envelope.Step.Inputs))
			p.mu.Unlock()
			if also != nil {
				also(j.Envelope)
			}
		}
		return next(ctx)
	})
}

// A fan-in of more than 1,000 results is released without them, and
// reads them when it runs: its handler gets every one, in order. One of
// 1,000 is still handed them in its job.
func TestWorkflowWideFanInReadsItsInputsWhenItRuns(t *testing.T) {
	for _, lines := range []int{1000, 1001, 2500} {
		t.Run("lines="+strconv.Itoa(lines), func(t *testing.T) {
			forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
				var rec wfRec
				rec.register(b.router)
				var pushes summaryPushes
				pushes.use(b.engine, nil)
				wf := runtime.NewWorkflow()
				runtime.AddStep(wf, wfSplit{Lines: lines})
				_, err := wf.Dispatch(b.ctx)
				require.NoError(t, err)
				b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 20})

				require.Len(t, rec.summary, 1, "the fan-in ran once")
				got := rec.summary[0]
				require.Len(t, got, lines)
				for i, v := range got {
					require.Equal(t, i*i, v, "result %d", i)
				}
				require.Len(t, pushes.read, 1)
				if lines > 1000 {
					require.True(t, pushes.read[0], "released without its inputs, to read them")
					require.Zero(t, pushes.inputs[0])
				} else {
					require.False(t, pushes.read[0], "released with its inputs")
					require.Equal(t, lines, pushes.inputs[0])
				}
			})
		})
	}
}

// A wide fan-in whose workflow's keys are gone by the time it runs (the
// workflow ended and expired, and the step was retried from the failed
// store, say) fails for good with an error that says so, rather than run
// with zero inputs.
func TestWorkflowWideFanInWhoseWorkflowExpiredFails(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		var pushes summaryPushes
		pushes.use(b.engine, func(env *runtime.Envelope) {
			if env.Step.Read {
				keys := keyspace.New(b.prefix).Workflow(env.Step.Workflow)
				require.NoError(t, b.rdb.Del(context.Background(), keys...).Err())
			}
		})
		wf := runtime.NewWorkflow()
		runtime.AddStep(wf, wfSplit{Lines: 1001})
		_, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 20})

		require.Empty(t, rec.summary, "the fan-in's handler never ran")
		require.Equal(t, []bool{true}, pushes.read)
		var failed []runtime.Event
		require.Eventually(t, func() bool {
			failed = b.log.of(runtime.JobFailed)
			return len(failed) > 0
		}, 5*time.Second, 10*time.Millisecond)
		require.Len(t, failed, 1)
		require.Equal(t, "wf.Summary", failed[0].Name)
		require.True(t, errors.Is(failed[0].Err, runtime.ErrNotAStep), "%v", failed[0].Err)
		require.ErrorContains(t, failed[0].Err, "its workflow no longer has it")
		require.Equal(t, 1, failed[0].Attempt, "failed for good on its first attempt")
	})
}

// failParentsRead fails the first read of a workflow's parents hash, as
// a lost connection would.
type failParentsRead struct {
	mu sync.Mutex
	n  int
}

func (h *failParentsRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failParentsRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) > 1 && fmt.Sprint(args[0]) == "hget" && strings.HasSuffix(fmt.Sprint(args[1]), ":parents") {
			h.mu.Lock()
			first := h.n == 0
			h.n++
			h.mu.Unlock()
			if first {
				cmd.SetErr(errCrash)
				return errCrash
			}
		}
		return next(ctx, cmd)
	}
}

func (h *failParentsRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// An error reading a wide fan-in's inputs fails that attempt only: the
// next one reads them and runs.
func TestWorkflowWideFanInRetriesAFailedRead(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var rec wfRec
		rec.register(b.router)
		hook := &failParentsRead{}
		b.rdb.AddHook(hook)
		wf := runtime.NewWorkflow()
		runtime.AddStep(wf, wfSplit{Lines: 1001})
		_, err := wf.Dispatch(b.ctx)
		require.NoError(t, err)
		b.runToEnd(t, runtime.WorkerConfig{Queues: wfQueues, StopWhenEmpty: true, Concurrency: 20, Tries: 3})

		require.Equal(t, 2, hook.n, "read twice: the first failed")
		require.Len(t, rec.summary, 1, "the fan-in ran once, on its second attempt")
		require.Len(t, rec.summary[0], 1001)
		require.Equal(t, 1000*1000, rec.summary[0][1000])
		require.Empty(t, b.log.of(runtime.JobFailed))
		require.Len(t, b.log.of(runtime.JobReleased), 1, "its first attempt was released for a retry")
	})
}
