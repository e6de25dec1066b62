// Command laravel is a Go service that takes over one job of a Laravel
// application, App\Jobs\SendWelcomeEmail, on the app's own Redis
// queues. The app keeps dispatching it from PHP; this service runs it,
// and can dispatch it too.
//
//	# the app's queue connection (config/queue.php, config/database.php)
//	export LARAVEL_QUEUE_URL='laravel+redis://127.0.0.1:6379/0?prefix=laravel_database_&cache_prefix=laravel_database_laravel_cache:&retry_after=90'
//	# where jobs that fail for good are kept (jobgen's failed store): not
//	# database 1, Laravel's cache, which `php artisan cache:clear` flushes
//	export JOBGEN_REDIS_URL=redis://127.0.0.1:6379/2
//
//	go run ./examples/laravel work                 # run the app's SendWelcomeEmail jobs
//	go run ./examples/laravel dispatch 7 ada@example.com
//
// `php artisan queue:restart` stops the worker, as it stops the app's.
// With no arguments it runs a demo on an in-process Redis: it dispatches
// two jobs as the app would and runs them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

// handlers are the service's handlers of the app's jobs.
type handlers struct{ out io.Writer }

func (h handlers) HandleSendWelcomeEmail(ctx context.Context, job SendWelcomeEmail) error {
	info, _ := runtime.JobInfoFrom(ctx)
	_, err := fmt.Fprintf(h.out, "sent a welcome email to %s (user %d), attempt %d\n", job.Email, job.UserID, info.Attempt)
	return err
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "laravel:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	queueURL, storeURL := os.Getenv("LARAVEL_QUEUE_URL"), os.Getenv(runtime.URLEnv)
	demo := len(args) == 0
	if demo {
		queueURL, storeURL = "laravel+embedded://laravel-demo?prefix=laravel_database_", "embedded://laravel-demo"
		args = []string{"demo"}
	}
	if queueURL == "" {
		return errors.New("set LARAVEL_QUEUE_URL to the app's queue connection, e.g. laravel+redis://127.0.0.1:6379/0?prefix=laravel_database_")
	}
	q, closeQ, err := laravel.Open(ctx, queueURL)
	if err != nil {
		return err
	}
	defer closeQ()

	m := laravel.NewMapper()
	RegisterLaravel(m) // generated: SendWelcomeEmail <-> App\Jobs\SendWelcomeEmail
	d, err := laravel.NewDispatcher(q, m)
	if err != nil {
		return err
	}
	runtime.SetConnection("laravel", d)

	switch args[0] {
	case "dispatch":
		if len(args) != 3 {
			return errors.New("usage: dispatch USER_ID EMAIL")
		}
		id, err := strconv.Atoi(args[1])
		if err != nil {
			return fmt.Errorf("user id %q: %w", args[1], err)
		}
		uuid, err := SendWelcomeEmail{UserID: id, Email: args[2]}.Dispatch(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "dispatched %s to the app's emails queue\n", uuid)
		return nil
	case "work", "demo":
	default:
		return fmt.Errorf("unknown command %q: want work or dispatch", args[0])
	}

	engine, err := runtime.Open(ctx, storeURL, runtime.EngineConfig{})
	if err != nil {
		return fmt.Errorf("the failed store: %w", err)
	}
	defer engine.Close()
	r := runtime.NewRouter()
	Register(r, handlers{out: out})
	cfg := laravel.WorkerConfig{Queues: []string{"emails"}, Failed: runtime.NewInspector(engine).Failed()}
	if demo {
		for i, email := range []string{"ada@example.com", "grace@example.com"} {
			if _, err := (SendWelcomeEmail{UserID: i + 1, Email: email}).Dispatch(ctx); err != nil {
				return err
			}
		}
		cfg.StopWhenEmpty = true
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.Sleep = 100 * time.Millisecond
	}
	w, err := laravel.NewWorker(q, m, r, cfg)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}
