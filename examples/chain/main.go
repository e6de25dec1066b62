// Command chain runs two orders through a chain of jobs: reserve stock,
// charge the card, ship, email the receipt. Each job runs only after the
// one before it succeeded. The second order's card is declined, so its
// chain stops there, and ChargeCard's failed hook queues a job that
// gives its stock back.
//
//	go run ./examples/chain
//	go run ./examples/chain -redis redis://127.0.0.1:6379/0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/jobgen/jobgen/runtime"
)

func main() {
	url := flag.String("redis", "embedded://", "Redis URL: redis://host:port/db, or embedded:// for an in-process server")
	flag.Parse()
	if err := run(context.Background(), *url, "chain-example", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chain:", err)
		os.Exit(1)
	}
}

// run dispatches the orders' chains and works them off, printing to out.
// Its keys start with prefix.
func run(ctx context.Context, url, prefix string, out io.Writer) error {
	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	if err != nil {
		return err
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine)

	orders := []struct {
		id    string
		items []string
		cents int
		card  string
	}{
		{"A-1", []string{"lamp", "bulb"}, 4250, "4242"},
		{"B-2", []string{"chair"}, 12900, "declined"},
	}
	for _, o := range orders {
		chain := ReserveStock{OrderID: o.id, Items: o.items}.WithChain(
			ChargeCard{OrderID: o.id, Cents: o.cents, Card: o.card},
			ShipOrder{OrderID: o.id},
			EmailReceipt{OrderID: o.id},
		)
		if _, err := chain.Dispatch(ctx); err != nil {
			return err
		}
	}

	router := runtime.NewRouter()
	Register(router, nil) // every job has its own Handle method
	// One job at a time, so that the output comes in order.
	worker, err := runtime.NewWorker(engine, router, runtime.WorkerConfig{
		Queues:        []string{"orders"},
		Concurrency:   1,
		StopWhenEmpty: true,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	// Handlers and failed hooks get their context from this one.
	return worker.Run(context.WithValue(ctx, printerKey{}, &printer{w: out}))
}

// printer prints whole lines.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
