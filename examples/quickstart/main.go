// Command quickstart dispatches a few jobs and runs a worker until they
// are all done: one now, one delayed, a chain of two, and one that fails
// every time, is retried on its backoff, and ends in the failed store.
// It prints what happens.
//
// It runs on an in-process Redis by default; -redis runs it on a real
// one:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -redis redis://127.0.0.1:6379/0
//
// Its keys start with "quickstart", so they are easy to tell from others.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	url := flag.String("redis", "embedded://", "Redis URL: redis://host:port/db, or embedded:// for an in-process server")
	flag.Parse()
	err := run(context.Background(), config{URL: *url, Prefix: "quickstart", Out: os.Stdout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// config says where the quickstart runs and where it prints.
type config struct {
	URL    string
	Prefix string
	Out    io.Writer
}

// queues are the quickstart's queues, highest priority first.
var queues = []string{"emails", "images", "billing", "default"}

func run(ctx context.Context, cfg config) error {
	engine, err := runtime.Open(ctx, cfg.URL, runtime.EngineConfig{Prefix: cfg.Prefix})
	if err != nil {
		return err
	}
	defer engine.Close()
	// Dispatch sends jobs to this engine.
	runtime.SetDefaultDispatcher(engine)
	out := &printer{w: cfg.Out}

	out.say("Dispatching:")
	if _, err := (SendWelcomeEmail{UserID: 1, Email: "ada@example.com"}).Dispatch(ctx); err != nil {
		return err
	}
	out.say("  SendWelcomeEmail to ada@example.com, now")
	if _, err := (ResizeAvatar{UserID: 1, Sizes: []int{64}}).Delay(300 * time.Millisecond).Dispatch(ctx); err != nil {
		return err
	}
	out.say("  ResizeAvatar of user 1, in 300ms")
	chain := ResizeAvatar{UserID: 2, Sizes: []int{64, 256}}.WithChain(NotifyTeam{Message: "user 2 is set up"})
	if _, err := chain.Dispatch(ctx); err != nil {
		return err
	}
	out.say("  ResizeAvatar of user 2, then NotifyTeam: a chain")
	bounceID, err := SendWelcomeEmail{UserID: 3, Email: "nobody@example.invalid"}.Dispatch(ctx)
	if err != nil {
		return err
	}
	out.say("  SendWelcomeEmail to nobody@example.invalid, which the mail server rejects")

	router := runtime.NewRouter()
	Register(router, handlers{out: out})
	worker, err := runtime.NewWorker(engine, router, runtime.WorkerConfig{
		Queues:      queues,
		Concurrency: 4,
		// The example prints each retry and failure itself, from the
		// events below; the worker's own log of them would say it twice.
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	worker.Subscribe(func(ev runtime.Event) {
		switch ev.Kind {
		case runtime.JobReleased:
			out.say("  %s attempt %d failed; retry in %v", ev.Name, ev.Attempt, ev.Delay)
		case runtime.JobFailed:
			out.say("  %s failed for good after %d attempts", ev.Name, ev.Attempt)
		}
	})
	// A real worker runs until it is stopped; this one stops once
	// nothing is left, delayed and retried jobs included.
	done := make(chan struct{})
	defer close(done)
	go stopWhenDone(ctx, engine, worker, done)

	out.say("Working:")
	if err := worker.Run(ctx); err != nil {
		return err
	}
	out.say("Done: nothing left to run.")

	failed, ok, err := runtime.NewInspector(engine).Failed().Get(ctx, "emails", bounceID)
	if err != nil {
		return err
	}
	if ok {
		out.say("In the failed store, to retry or forget:")
		out.say("  %s on queue %s, %d attempts: %s", failed.Name, failed.Queue, failed.Attempts, failed.Error)
		if !strings.HasPrefix(cfg.URL, "embedded:") {
			out.say("List it with: go tool jobgen queue:failed --prefix %s --redis URL", cfg.Prefix)
		}
	}
	return nil
}

// handlers implements the generated Handlers interface: leave a method
// out and the program does not compile.
type handlers struct {
	out *printer
}

// errNoSuchUser is the mail server's answer for example.invalid.
var errNoSuchUser = errors.New("550 no such user")

func (h handlers) HandleSendWelcomeEmail(ctx context.Context, job SendWelcomeEmail) error {
	if strings.HasSuffix(job.Email, ".invalid") {
		info, _ := runtime.JobInfoFrom(ctx)
		h.out.say("  welcome email to %s, attempt %d: rejected", job.Email, info.Attempt)
		return fmt.Errorf("send to %s: %w", job.Email, errNoSuchUser)
	}
	h.out.say("  sent a welcome email to %s", job.Email)
	return nil
}

func (h handlers) HandleResizeAvatar(ctx context.Context, job ResizeAvatar) error {
	h.out.say("  resized the avatar of user %d to %v", job.UserID, job.Sizes)
	return nil
}

func (h handlers) HandleNotifyTeam(ctx context.Context, job NotifyTeam) error {
	h.out.say("  told the team: %s", job.Message)
	return nil
}

// stopWhenDone stops w once no job of the quickstart's queues is ready,
// delayed or running, or returns when done is closed.
func stopWhenDone(ctx context.Context, e *runtime.Engine, w *runtime.Worker, done <-chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		var pending int64
		for _, q := range queues {
			s, err := runtime.NewInspector(e).Sizes(ctx, q)
			if err != nil {
				pending = 1
				break
			}
			pending += s.Total()
		}
		if pending == 0 {
			w.Stop()
			return
		}
	}
}

// printer prints whole lines from concurrent handlers.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
