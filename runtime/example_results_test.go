package runtime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Quote is a job whose handler returns a result; jobgen generates its
// methods, Await and Result included, for a struct annotated with
// //job:queue=quotes result=Price.
type Quote struct {
	Grams int64
}

// Price is what a Quote returns.
type Price struct {
	Cents int64
}

func (Quote) JobName() string                { return "shipping.Quote" }
func (Quote) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "quotes"} }
func (j Quote) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// Dispatch a job and await its result, with the context's deadline as
// the timeout.
func ExampleAwait() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-await", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	ctx = runtime.WithDispatcher(ctx, engine)

	r := runtime.NewRouter()
	runtime.RegisterResult(r, "shipping.Quote", func(ctx context.Context, q Quote) (Price, error) {
		return Price{Cents: 5 * q.Grams}, nil
	})
	w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{Queues: []string{"quotes"}, Logger: exampleLogger})
	if err != nil {
		panic(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	id, err := runtime.Dispatch(ctx, Quote{Grams: 300})
	if err != nil {
		panic(err)
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	price, err := runtime.Await[Price](actx, Quote{}, id)
	if err != nil {
		panic(err)
	}
	fmt.Println("cents:", price.Cents)
	// Output: cents: 1500
}
