// Command quickstart dispatches a few jobs and runs a worker until they
// are done. It needs a Redis URL in JOBGEN_REDIS_URL; embedded:// runs
// everything in this process:
//
//	JOBGEN_REDIS_URL=embedded:// go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// handlers implements the generated Handlers interface: leave a method
// out and the program does not compile.
type handlers struct {
	attempts map[int]int
}

func (h handlers) HandleSendWelcomeEmail(ctx context.Context, job SendWelcomeEmail) error {
	info, _ := runtime.JobInfoFrom(ctx)
	if job.UserID == 2 && info.Attempt == 1 {
		fmt.Printf("  send welcome email to %s: mail server busy, will retry\n", job.Email)
		return fmt.Errorf("mail server busy")
	}
	fmt.Printf("  send welcome email to %s (attempt %d)\n", job.Email, info.Attempt)
	return nil
}

func (h handlers) HandleResizeAvatar(ctx context.Context, job ResizeAvatar) error {
	fmt.Printf("  resize avatar of user %d to %v\n", job.UserID, job.Sizes)
	return nil
}

func (h handlers) HandleNotifyTeam(ctx context.Context, job NotifyTeam) error {
	fmt.Printf("  notify team: %s\n", job.Message)
	return nil
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	engine, err := runtime.Open(ctx, os.Getenv(runtime.URLEnv), runtime.EngineConfig{Prefix: "quickstart"})
	if err != nil {
		return err
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine)

	fmt.Println("dispatching:")
	if _, err := (SendWelcomeEmail{UserID: 1, Email: "ada@example.com"}).Dispatch(ctx); err != nil {
		return err
	}
	if _, err := (SendWelcomeEmail{UserID: 2, Email: "grace@example.com"}).Dispatch(ctx); err != nil {
		return err
	}
	if _, err := (ResizeAvatar{UserID: 1, Sizes: []int{64, 256}}).Delay(300 * time.Millisecond).Dispatch(ctx); err != nil {
		return err
	}
	chain := ResizeAvatar{UserID: 2, Sizes: []int{64}}.
		WithChain(NotifyTeam{Message: "user 2 is set up"})
	if _, err := chain.Dispatch(ctx); err != nil {
		return err
	}
	sizes, err := engine.Sizes(ctx, "emails")
	if err != nil {
		return err
	}
	fmt.Printf("  emails queue: %d ready\n", sizes.Ready)

	router := runtime.NewRouter()
	Register(router, handlers{})
	worker, err := runtime.NewWorker(engine, router, runtime.WorkerConfig{
		Queues:      []string{"emails", "default"},
		Concurrency: 4,
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	// Stop the worker once every job, delayed and retried ones included,
	// is done. A long-running worker would simply keep going.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			if pending(ctx, engine, "emails", "default") == 0 {
				cancel()
			}
		}
	}()
	fmt.Println("working:")
	if err := worker.Run(ctx); err != nil {
		return err
	}
	fmt.Println("done: every job ran")
	return nil
}

// pending counts the unfinished jobs of queues; -1 if Redis cannot say.
func pending(ctx context.Context, e *runtime.Engine, queues ...string) int64 {
	var n int64
	for _, q := range queues {
		s, err := e.Sizes(ctx, q)
		if err != nil {
			return -1
		}
		n += s.Total()
	}
	return n
}
