package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/cputime"
	"github.com/jobgen/jobgen/runtime"
)

// The steps of BenchmarkWorkflowDrain's workflow: a root, children after
// it that each return a result, and a fan-in handed all their results.

type wfBenchRoot struct{}

func (wfBenchRoot) JobName() string                { return "bench.WfRoot" }
func (wfBenchRoot) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: benchQueue} }
func (j wfBenchRoot) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// wfBenchSpawner spawns the children and the fan-in when it runs.
type wfBenchSpawner struct{}

func (wfBenchSpawner) JobName() string                { return "bench.WfSpawner" }
func (wfBenchSpawner) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: benchQueue} }
func (j wfBenchSpawner) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfBenchChild struct{ N int }

func (wfBenchChild) JobName() string                { return "bench.WfChild" }
func (wfBenchChild) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: benchQueue} }
func (j wfBenchChild) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfBenchSum struct{}

func (wfBenchSum) JobName() string { return "bench.WfSum" }
func (wfBenchSum) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: benchQueue, Needs: []string{"[]bench.WfChild"}}
}
func (j wfBenchSum) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// wfBenchSteps is the number of children of BenchmarkWorkflowDrain's
// workflow, and of plain jobs it drains beside it.
const wfBenchSteps = 10_000

// BenchmarkWorkflowDrain drains, in turn, 10,000 plain jobs and a
// workflow of 10,000 steps (a root releasing 10,000 children, each
// returning a result, and a fan-in step handed all 10,000 results), each
// with one worker of 100 slots, timed from the worker's start to the last
// handler's (the fan-in's). One op is one plain drain and one workflow
// drain. It reports the workflow's steps a second over the plain jobs a
// second (wf/plain; the target is at least 0.5), and the script calls
// (EVALSHA and EVAL, from INFO commandstats) per plain job and per step
// (the target: at most one more per step). The commandstats are the
// server's: run it on a server nothing else uses.
//
// Its second case, released-at-dispatch, drains the same steps with no
// root: the children have no parent, so the dispatch releases and pushes
// them, and the drain is left with running them, settling their ends and
// the fan-in. It bounds what the first case can reach by making the
// release and the push of the children cheaper.
//
// Its third case, spawned, has the root spawn the children and the fan-in
// when it runs (SpawnMany, Spawn): a dynamic fan-out, released in parts
// as the static one is.
func BenchmarkWorkflowDrain(b *testing.B) {
	b.Run("fan-out-fan-in", func(b *testing.B) { benchWorkflowDrain(b, "rooted") })
	b.Run("released-at-dispatch", func(b *testing.B) { benchWorkflowDrain(b, "released") })
	b.Run("spawned", func(b *testing.B) { benchWorkflowDrain(b, "spawned") })
}

// benchWorkflowDrain is BenchmarkWorkflowDrain, with the children after a
// root ("rooted"), with no parent ("released"), or spawned by the root
// ("spawned").
func benchWorkflowDrain(b *testing.B, shape string) {
	ctx, e := benchEngine(b)
	rdb := e.Client()
	var plainTime, wfTime time.Duration
	var plainScripts, wfScripts, plainCmds, wfCmds int64
	var plainCPU, wfCPU float64
	var plainGo, wfGo time.Duration
	var dispatch time.Duration
	for range b.N {
		b.StopTimer()
		out := make([]runtime.Outgoing, wfBenchSteps)
		for i := range out {
			env := benchEnv()
			env.Body, _ = runtime.Encode(benchJob{})
			out[i] = runtime.Outgoing{Envelope: env}
		}
		require.NoError(b, e.PushMany(ctx, out))
		s0, c0 := scriptCalls(b, rdb)
		u0 := redisCPU(b, rdb)
		g0 := processCPU(b)
		d := drainUntil(b, ctx, e, func(r *runtime.Router, done func()) {
			var n atomic.Int64
			runtime.Register(r, "bench.Job", func(context.Context, benchJob) error {
				if n.Add(1) == wfBenchSteps {
					done()
				}
				return nil
			})
		})
		plainGo += processCPU(b) - g0
		s1, c1 := scriptCalls(b, rdb)
		plainCPU += redisCPU(b, rdb) - u0
		plainTime += d
		plainScripts += s1 - s0
		plainCmds += c1 - c0

		wf := runtime.NewWorkflow()
		kids := make([]wfBenchChild, wfBenchSteps)
		for i := range kids {
			kids[i] = wfBenchChild{N: i}
		}
		switch shape {
		case "rooted":
			children := runtime.AddSteps(wf, kids, runtime.After(runtime.AddStep(wf, wfBenchRoot{})))
			runtime.AddStep(wf, wfBenchSum{}, runtime.Needs(children.Need()))
		case "released":
			children := runtime.AddSteps(wf, kids)
			runtime.AddStep(wf, wfBenchSum{}, runtime.Needs(children.Need()))
		default:
			runtime.AddStep(wf, wfBenchSpawner{})
		}
		began := time.Now()
		_, err := e.DispatchWorkflow(ctx, wf)
		require.NoError(b, err)
		dispatch += time.Since(began)
		s0, c0 = scriptCalls(b, rdb)
		u0 = redisCPU(b, rdb)
		g0 = processCPU(b)
		d = drainUntil(b, ctx, e, func(r *runtime.Router, done func()) {
			runtime.Register(r, "bench.WfRoot", func(context.Context, wfBenchRoot) error { return nil })
			runtime.Register(r, "bench.WfSpawner", func(ctx context.Context, _ wfBenchSpawner) error {
				children, err := runtime.SpawnMany(ctx, kids)
				if err != nil {
					return err
				}
				_, err = runtime.Spawn(ctx, wfBenchSum{}, runtime.Needs(children.Need()))
				return err
			})
			runtime.RegisterResult(r, "bench.WfChild", func(_ context.Context, j wfBenchChild) (int, error) { return j.N, nil })
			runtime.RegisterStep(r, "bench.WfSum", func(_ context.Context, _ wfBenchSum, in []int) error {
				if len(in) != wfBenchSteps || in[wfBenchSteps-1] != wfBenchSteps-1 {
					b.Errorf("the fan-in was handed %d results", len(in))
				}
				done()
				return nil
			}, func(in *runtime.StepInputs) ([]int, error) { return runtime.InputList[int](in, 0) })
		})
		wfGo += processCPU(b) - g0
		s1, c1 = scriptCalls(b, rdb)
		wfCPU += redisCPU(b, rdb) - u0
		wfTime += d
		wfScripts += s1 - s0
		wfCmds += c1 - c0
	}
	steps := float64(wfBenchSteps + 1)
	if shape != "released" {
		steps++
	}
	plainRate := float64(b.N*wfBenchSteps) / plainTime.Seconds()
	wfRate := float64(b.N) * steps / wfTime.Seconds()
	b.ReportMetric(plainRate, "plain-jobs/s")
	b.ReportMetric(wfRate, "wf-steps/s")
	b.ReportMetric(wfRate/plainRate, "wf/plain")
	b.ReportMetric(float64(plainScripts)/float64(b.N*wfBenchSteps), "scripts/job")
	b.ReportMetric(float64(wfScripts)/(float64(b.N)*steps), "scripts/step")
	b.ReportMetric(float64(dispatch.Milliseconds())/float64(b.N), "wf-dispatch-ms")
	b.ReportMetric(plainCPU*1e6/float64(b.N*wfBenchSteps), "redis-µs/job")
	b.ReportMetric(wfCPU*1e6/(float64(b.N)*steps), "redis-µs/step")
	b.ReportMetric(float64(plainGo.Microseconds())/float64(b.N*wfBenchSteps), "go-µs/job")
	b.ReportMetric(float64(wfGo.Microseconds())/(float64(b.N)*steps), "go-µs/step")
	b.ReportMetric(float64(plainCmds)/float64(b.N*wfBenchSteps), "cmds/job")
	b.ReportMetric(float64(wfCmds)/(float64(b.N)*steps), "cmds/step")
}

// drainUntil runs a worker of 100 slots on the bench queue, with the
// handlers reg registers, until one calls done, and returns the time
// from the worker's start to then. The worker's stop is not timed.
func drainUntil(b *testing.B, ctx context.Context, e *runtime.Engine, reg func(r *runtime.Router, done func())) time.Duration {
	b.Helper()
	r := runtime.NewRouter()
	finished := make(chan struct{})
	var once atomic.Bool
	reg(r, func() {
		if once.CompareAndSwap(false, true) {
			close(finished)
		}
	})
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{benchQueue}, Concurrency: 100, Logger: quiet, Sleep: 10 * time.Millisecond})
	require.NoError(b, err)
	wctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	start := time.Now()
	b.StartTimer()
	go func() { ran <- w.Run(wctx) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		b.Fatal("the drain did not end within 2 minutes")
	}
	d := time.Since(start)
	b.StopTimer()
	stop()
	require.NoError(b, <-ran)
	return d
}

// processCPU returns the CPU time this process has used so far: the
// worker's and the benchmark's, which waits.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	t, err := cputime.Process()
	require.NoError(b, err)
	return t
}

// redisCPU returns the CPU time the server has used so far, in seconds
// (used_cpu_user + used_cpu_sys of INFO cpu).
func redisCPU(b *testing.B, rdb redis.UniversalClient) float64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "cpu").Result()
	require.NoError(b, err)
	var sum float64
	for _, line := range strings.Split(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(b, err, line)
			sum += f
		}
	}
	return sum
}

// scriptCalls returns the server's script calls (EVALSHA, EVAL, their
// read-only forms) and commands of any kind, so far.
func scriptCalls(b *testing.B, rdb redis.UniversalClient) (scripts, all int64) {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(b, err)
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		require.NoError(b, err, line)
		all += n
		switch strings.TrimPrefix(name, "cmdstat_") {
		case "evalsha", "eval", "evalsha_ro", "eval_ro":
			scripts += n
		}
	}
	return scripts, all
}
