// Command mail is a mail-sending application in miniature. Its handlers
// are methods of Mailer, a struct holding their dependencies: a Sender
// (here one that prints each message), templates and a logger.
//
// With no arguments it runs a demo on an in-process Redis (or on -redis
// URL): it signs up two users and asks for a password reset, and a
// worker sends the mail. The address example.invalid bounces.
//
//	go run ./examples/mail
//
// With a queue command, it is the application's console, queue:work
// included, on the Redis of --redis, JOBGEN_REDIS_URL or REDIS_URL:
//
//	go run ./examples/mail queue:work --queue mail --redis redis://127.0.0.1:6379/0
//	go run ./examples/mail queue:failed --redis redis://127.0.0.1:6379/0
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

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	if console.Handles(os.Args[1:]) {
		mailer, err := NewMailer(printSender{w: os.Stdout}, slog.New(slog.NewTextHandler(os.Stderr, nil)), "hello@example.com")
		if err != nil {
			fmt.Fprintln(os.Stderr, "mail:", err)
			os.Exit(1)
		}
		router := runtime.NewRouter()
		Register(router, mailer)
		console.Main(router)
	}
	url := flag.String("redis", "embedded://", "Redis URL: redis://host:port/db, or embedded:// for an in-process server")
	flag.Parse()
	if err := demo(context.Background(), *url, "mail-example", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mail:", err)
		os.Exit(1)
	}
}

// demo signs up users and sends their mail through a worker, printing
// the messages and the mailer's log to out. Its keys start with prefix.
func demo(ctx context.Context, url, prefix string, out io.Writer) error {
	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	if err != nil {
		return err
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine)

	// The log leaves out times, so that the output is the same each run.
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	mailer, err := NewMailer(printSender{w: out}, log, "hello@example.com")
	if err != nil {
		return err
	}
	router := runtime.NewRouter()
	Register(router, mailer)

	for _, u := range []struct{ email, name string }{{"ada@example.com", "Ada"}, {"nobody@example.invalid", "Nobody"}} {
		if err := SignUp(ctx, u.email, u.name); err != nil {
			return err
		}
	}
	if _, err := (SendPasswordReset{Email: "ada@example.com", Token: "abc123"}).Dispatch(ctx); err != nil {
		return err
	}

	// One job at a time, so the messages print in order.
	worker, err := runtime.NewWorker(engine, router, runtime.WorkerConfig{
		Queues:        []string{"mail"},
		Concurrency:   1,
		StopWhenEmpty: true,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	return worker.Run(ctx)
}

// printSender "sends" a message by printing it: a stand-in for SMTP.
// Addresses at example.invalid bounce.
type printSender struct{ w io.Writer }

func (s printSender) Send(ctx context.Context, m Message) error {
	if strings.HasSuffix(m.To, ".invalid") {
		return &PermanentError{Err: errors.New("550 no such domain: " + m.To)}
	}
	_, err := fmt.Fprintf(s.w, "From: %s\nTo: %s\nSubject: %s\n\n%s\n\n", m.From, m.To, m.Subject, m.Body)
	return err
}
