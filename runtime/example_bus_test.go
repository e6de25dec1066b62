package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Step is a job of the examples below; Fail makes its handler fail.
type Step struct {
	Name string
	Fail bool
}

func (Step) JobName() string                { return "example.Step" }
func (Step) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j Step) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// exampleSteps returns an engine on an embedded Redis, a context that
// dispatches to it, and a router whose Step handler prints each step.
func exampleSteps(name string) (context.Context, *runtime.Engine, *runtime.Router) {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://"+name, runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	r := runtime.NewRouter()
	runtime.Register(r, "example.Step", func(ctx context.Context, s Step) error {
		fmt.Println("step", s.Name)
		if s.Fail {
			return errors.New(s.Name + " broke")
		}
		return nil
	})
	return runtime.WithDispatcher(ctx, engine), engine, r
}

// runSteps runs one job at a time until the queue is empty.
func runSteps(ctx context.Context, engine *runtime.Engine, r *runtime.Router) {
	w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{Concurrency: 1, StopWhenEmpty: true, Logger: exampleLogger})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
}

// reportFailure is a catch callback: chains carry its name and argument,
// so every worker registers it.
var reportFailure = runtime.NewCallback("example.report", func(ctx context.Context, what string, o runtime.Outcome) error {
	fmt.Printf("%s failed at %s: %v\n", what, o.JobName, o.Err)
	return nil
})

// A chain runs its jobs one after another; when one fails for good, its
// catch runs and the rest are dropped.
func ExampleChain() {
	ctx, engine, r := exampleSteps("example-chain")
	defer engine.Close()
	runtime.RegisterCallback(r, reportFailure)

	_, err := runtime.Chain(Step{Name: "fetch"}, Step{Name: "parse", Fail: true}, Step{Name: "store"}).
		Catch(reportFailure.With("the import")).
		Dispatch(ctx)
	if err != nil {
		panic(err)
	}
	runSteps(ctx, engine, r)
	// Output:
	// step fetch
	// step parse
	// the import failed at example.Step: jobgen: job failed on its only try: parse broke
}

// batchDone prints a batch's counts when its callbacks run.
var batchDone = runtime.NewCallback("example.batch", func(ctx context.Context, kind string, o runtime.Outcome) error {
	fmt.Printf("%s: %d of %d processed, %d failed\n", kind, o.Batch.Processed(), o.Batch.Total, o.Batch.Failed)
	return nil
})

// A batch runs its jobs, a chain among them, and its callbacks when they
// are done.
func ExampleNewBatch() {
	ctx, engine, r := exampleSteps("example-batch")
	defer engine.Close()
	runtime.RegisterCallback(r, batchDone)

	id, err := runtime.NewBatch(Step{Name: "a"}, runtime.Chain(Step{Name: "b1"}, Step{Name: "b2"}), Step{Name: "c", Fail: true}).
		AllowFailures().
		Catch(batchDone.With("catch")).
		Finally(batchDone.With("finally")).
		Dispatch(ctx)
	if err != nil {
		panic(err)
	}
	runSteps(ctx, engine, r)
	status, _, err := runtime.NewInspector(engine).Batches().Find(ctx, id)
	if err != nil {
		panic(err)
	}
	fmt.Printf("progress %d%%, finished %v\n", status.Progress(), status.Finished())
	// Output:
	// step a
	// step b1
	// step c
	// catch: 2 of 4 processed, 1 failed
	// step b2
	// finally: 3 of 4 processed, 1 failed
	// progress 75%, finished false
}

// Report is unique per day: while one is queued or running, another for
// the same day is not dispatched.
type Report struct{ Day string }

func (Report) JobName() string { return "example.Report" }
func (Report) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{UniqueFor: time.Hour}
}
func (j Report) EncodeJob() ([]byte, error) { return runtime.Encode(j) }
func (j Report) UniqueID() string           { return j.Day }

// ResultOf tells a duplicate of a unique job apart without treating it
// as an error.
func ExampleResultOf() {
	ctx, engine, _ := exampleSteps("example-unique")
	defer engine.Close()
	for _, day := range []string{"mon", "mon", "tue"} {
		res, err := runtime.ResultOf(runtime.Dispatch(ctx, Report{Day: day}))
		if err != nil {
			panic(err)
		}
		fmt.Println(day, "duplicate:", res.Duplicate)
	}
	// Output:
	// mon duplicate: false
	// mon duplicate: true
	// tue duplicate: false
}
