package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded"
)

// Welcome is a job written by hand; jobgen generates these three methods
// for a struct annotated with //job:queue=users tries=1.
type Welcome struct {
	Name string
}

func (Welcome) JobName() string                { return "users.Welcome" }
func (Welcome) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "users", Tries: 1} }
func (j Welcome) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// exampleLogger is a logger for examples' workers, whose logs would go to stderr.
var exampleLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// Open an in-process Redis, as a quickstart or a test does; a real one
// is redis://host:port/db.
func ExampleOpen() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-open", runtime.EngineConfig{Prefix: "myapp"})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine) // Dispatch sends jobs here

	if _, err := runtime.Dispatch(ctx, Welcome{Name: "Ada"}); err != nil {
		panic(err)
	}
	sizes, err := runtime.NewInspector(engine).Sizes(ctx, "users")
	if err != nil {
		panic(err)
	}
	fmt.Println("ready:", sizes.Ready)
	// Output: ready: 1
}

// Register a handler, then run a worker until its queues are empty.
func ExampleNewWorker() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-worker", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	for _, name := range []string{"Ada", "Grace"} {
		if _, err := engine.Dispatch(ctx, runtime.NewPendingDispatch(Welcome{Name: name})); err != nil {
			panic(err)
		}
	}

	r := runtime.NewRouter()
	runtime.Register(r, "users.Welcome", func(ctx context.Context, job Welcome) error {
		fmt.Println("welcome,", job.Name)
		return nil
	})
	w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{
		Queues:        []string{"users"},
		Concurrency:   1,
		StopWhenEmpty: true,
		Logger:        exampleLogger,
	})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
	fmt.Println("stopped:", w.StopReason())
	// Output:
	// welcome, Ada
	// welcome, Grace
	// stopped: empty
}

// A failed hook runs once a job has failed for good.
func ExampleRegister() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-register", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	if _, err := engine.Dispatch(ctx, runtime.NewPendingDispatch(Welcome{Name: "Ada"})); err != nil {
		panic(err)
	}

	r := runtime.NewRouter()
	runtime.Register(r, "users.Welcome",
		func(ctx context.Context, job Welcome) error { return errors.New("mail server down") },
		runtime.OnFailed(func(ctx context.Context, job Welcome, err error) {
			fmt.Printf("gave up on %s: %v\n", job.Name, err)
		}))
	w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{Queues: []string{"users"}, StopWhenEmpty: true, Logger: exampleLogger})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
	// Output: gave up on Ada: jobgen: job failed on its only try: mail server down
}

// Dispatch sends a job with the options of its annotation.
func ExampleDispatch() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-dispatch", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine)

	id, err := runtime.Dispatch(ctx, Welcome{Name: "Ada"})
	if err != nil {
		panic(err)
	}
	fmt.Println("job ID of", len(id), "characters")
	// Output: job ID of 26 characters
}

// Delay and OnQueue override a job's annotation for one dispatch.
func ExamplePendingDispatch_Delay() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-delay", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	ctx = runtime.WithDispatcher(ctx, engine)

	_, err = runtime.NewPendingDispatch(Welcome{Name: "Ada"}).Delay(time.Hour).OnQueue("later").Dispatch(ctx)
	if err != nil {
		panic(err)
	}
	s, err := runtime.NewInspector(engine).Sizes(ctx, "later")
	if err != nil {
		panic(err)
	}
	fmt.Printf("ready %d, delayed %d\n", s.Ready, s.Delayed)
	// Output: ready 0, delayed 1
}

// A chain runs its jobs one after another, each once the one before it
// has succeeded.
func ExamplePendingDispatch_WithChain() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-chain", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	ctx = runtime.WithDispatcher(ctx, engine)

	_, err = runtime.NewPendingDispatch(Welcome{Name: "first"}).
		WithChain(Welcome{Name: "second"}, Welcome{Name: "third"}).
		Dispatch(ctx)
	if err != nil {
		panic(err)
	}

	r := runtime.NewRouter()
	runtime.Register(r, "users.Welcome", func(ctx context.Context, job Welcome) error {
		fmt.Println(job.Name)
		return nil
	})
	w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{Queues: []string{"users"}, Concurrency: 1, StopWhenEmpty: true, Logger: exampleLogger})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
	// Output:
	// first
	// second
	// third
}

// WithDispatcher puts a dispatcher on a context: how a test swaps in a
// fake that records jobs instead of sending them.
func ExampleWithDispatcher() {
	rec := &exampleRecorder{}
	ctx := runtime.WithDispatcher(context.Background(), rec)

	if _, err := runtime.NewPendingDispatch(Welcome{Name: "Ada"}).Delay(time.Minute).Dispatch(ctx); err != nil {
		panic(err)
	}
	p := rec.sent[0]
	fmt.Printf("%s on %q after %v: %+v\n", p.Job().JobName(), p.Queue(), p.DelayDuration(), p.Job())
	// Output: users.Welcome on "users" after 1m0s: {Name:Ada}
}

// exampleRecorder is a fake runtime.Dispatcher.
type exampleRecorder struct {
	sent []*runtime.PendingDispatch
}

func (r *exampleRecorder) Dispatch(ctx context.Context, p *runtime.PendingDispatch) (string, error) {
	r.sent = append(r.sent, p)
	return fmt.Sprint("fake-", len(r.sent)), nil
}

// List the failed jobs of a queue, then retry them.
func ExampleFailedStore_List() {
	ctx := context.Background()
	engine, err := runtime.Open(ctx, "embedded://example-failed", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	if _, err := engine.Dispatch(ctx, runtime.NewPendingDispatch(Welcome{Name: "Ada"})); err != nil {
		panic(err)
	}
	down := true
	r := runtime.NewRouter()
	runtime.Register(r, "users.Welcome", func(ctx context.Context, job Welcome) error {
		if down {
			return errors.New("mail server down")
		}
		fmt.Println("welcome,", job.Name)
		return nil
	})
	work := func() {
		w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{Queues: []string{"users"}, StopWhenEmpty: true, Logger: exampleLogger})
		if err != nil {
			panic(err)
		}
		if err := w.Run(ctx); err != nil {
			panic(err)
		}
	}
	work() // the job fails: it has one try

	failed, err := runtime.NewInspector(engine).Failed().List(ctx, "users", 0, 10)
	if err != nil {
		panic(err)
	}
	for _, f := range failed {
		fmt.Printf("%s after %d attempt: %s\n", f.Name, f.Attempts, f.Error)
	}

	down = false
	retried, err := runtime.NewInspector(engine).Failed().Retry(ctx, "users", failed[0].ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("retried:", len(retried))
	work()
	// Output:
	// users.Welcome after 1 attempt: jobgen: job failed on its only try: mail server down
	// retried: 1
	// welcome, Ada
}

func ExampleParseBackoff() {
	delays, err := runtime.ParseBackoff("1s,5s,30s")
	fmt.Println(delays, err)
	_, err = runtime.ParseBackoff("1s,soon")
	fmt.Println(err != nil)
	// Output:
	// [1s 5s 30s] <nil>
	// true
}
