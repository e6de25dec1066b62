// Command dashboard is a demo of the web dashboard: it dispatches 10,000
// jobs to a few queues, runs a worker that drains them while a payment
// provider is down for the first 30 seconds (charges fail then), and
// serves the dashboard, so that its numbers move, failed charges pile up,
// and a retry from the page succeeds once the provider is back.
//
//	go run ./examples/dashboard                  # in-process Redis
//	go run ./examples/dashboard -redis redis://127.0.0.1:6379/0
//
// then open http://127.0.0.1:8080/. Its keys start with "demo".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	url := flag.String("redis", "embedded://", "Redis URL, or embedded:// for an in-process server")
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve the dashboard on")
	jobs := flag.Int("jobs", 10_000, "jobs to dispatch")
	outage := flag.Duration("outage", 30*time.Second, "how long charges fail after the start")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *url, *addr, *jobs, *outage); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard demo:", err)
		os.Exit(1)
	}
}

type sendWelcome struct {
	UserID int
	Email  string
}

func (sendWelcome) JobName() string { return "mail.SendWelcome" }
func (j sendWelcome) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "emails", Tags: []string{"mail", fmt.Sprintf("user:%d", j.UserID)}}
}
func (j sendWelcome) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type charge struct {
	Invoice string
	Cents   int
}

func (charge) JobName() string { return "billing.Charge" }
func (j charge) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "billing", Tries: 2, Backoff: []time.Duration{time.Second}, Tags: []string{"billing", j.Invoice}}
}
func (j charge) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type resize struct {
	ImageID int
	Sizes   []int
}

func (resize) JobName() string                { return "images.Resize" }
func (resize) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "images"} }
func (j resize) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type report struct{ Month string }

func (report) JobName() string                { return "reports.Build" }
func (report) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "reports"} }
func (j report) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func run(ctx context.Context, url, addr string, n int, outage time.Duration) error {
	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: "demo"})
	if err != nil {
		return err
	}
	defer engine.Close()
	ctx = runtime.WithDispatcher(ctx, engine)
	back := time.Now().Add(outage)

	r := runtime.NewRouter()
	work := func(ctx context.Context, d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	runtime.Register(r, "mail.SendWelcome", func(ctx context.Context, j sendWelcome) error {
		return work(ctx, time.Duration(5+rand.IntN(20))*time.Millisecond)
	})
	runtime.Register(r, "billing.Charge", func(ctx context.Context, j charge) error {
		if time.Now().Before(back) {
			return errors.New("payment provider unavailable: 503 Service Unavailable")
		}
		return work(ctx, 30*time.Millisecond)
	})
	runtime.Register(r, "images.Resize", func(ctx context.Context, j resize) error {
		return work(ctx, time.Duration(20+rand.IntN(60))*time.Millisecond)
	})
	runtime.Register(r, "reports.Build", func(ctx context.Context, j report) error { return work(ctx, time.Second) })

	// Dispatch in the background, a few hundred a second, so the charts
	// have something to show.
	go func() {
		for i := range n {
			var j runtime.Job
			switch i % 10 {
			case 0:
				j = charge{Invoice: fmt.Sprintf("INV-%05d", i), Cents: 100 + rand.IntN(10_000)}
			case 1, 2:
				j = resize{ImageID: i, Sizes: []int{64, 256, 1024}}
			default:
				j = sendWelcome{UserID: i, Email: fmt.Sprintf("user%d@example.com", i)}
			}
			if _, err := runtime.Dispatch(ctx, j); err != nil {
				return
			}
			if i%25 == 24 {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	for _, m := range []string{"2026-10", "2026-11", "2026-12"} {
		if _, err := runtime.NewPendingDispatch(report{Month: m}).Delay(time.Hour).Dispatch(ctx); err != nil {
			return err
		}
	}
	var rows []runtime.Job
	for i := range 40 {
		rows = append(rows, resize{ImageID: 90_000 + i, Sizes: []int{128}})
	}
	if _, err := runtime.NewBatch(rows...).Name("catalogue thumbnails").OnQueue("images").Dispatch(ctx); err != nil {
		return err
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i, qs := range [][]string{{"billing", "emails"}, {"images", "emails", "reports"}} {
		w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{
			Name: fmt.Sprintf("worker-%d", i+1), Queues: qs, Concurrency: 8, Logger: quiet,
		})
		if err != nil {
			return err
		}
		go func() { _ = w.Run(ctx) }()
	}

	srv := &http.Server{Addr: addr, Handler: dashboard.New(engine, dashboard.Options{Title: "demo"}), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "dashboard on http://%s/ (Ctrl-C stops it)\n", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
